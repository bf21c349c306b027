import { describe, expect, it } from 'vitest';
import { buildSnippets, normalizeBase, pickModel } from './snippets';

const input = { baseUrl: 'https://api.example.com/', apiKey: 'sk-test123', models: ['gpt-4o-mini', 'claude-haiku-4-5', 'gemini-2.5-flash'] };
const byId = (id: string) => buildSnippets(input).find((s) => s.id === id)!.code;

describe('connection snippets', () => {
  it('normalizes the base URL', () => {
    expect(normalizeBase('https://a.example/v1/')).toBe('https://a.example');
    expect(normalizeBase(' http://127.0.0.1:3000 ')).toBe('http://127.0.0.1:3000');
  });

  it('picks a model of each family the key offers, else the first', () => {
    expect(pickModel(input.models, 'anthropic')).toBe('claude-haiku-4-5');
    expect(pickModel(['gpt-4o-mini'], 'gemini')).toBe('gpt-4o-mini');
    expect(pickModel([], 'openai')).toBe('gpt-4o-mini');
  });

  it('fills every snippet with the base URL and the key', () => {
    const all = buildSnippets(input);
    expect(all.map((s) => s.id)).toEqual([
      'openai-curl', 'openai-python', 'openai-node', 'anthropic-curl', 'anthropic-python', 'anthropic-node',
      'gemini-curl', 'gemini-python', 'gemini-node', 'claude-code', 'codex', 'gemini-cli', 'cherry-studio', 'lobechat',
    ]);
    for (const s of all) {
      expect(s.code, s.id).toContain('sk-test123');
      expect(s.code, s.id).toContain('https://api.example.com');
      expect(s.code, s.id).not.toContain('example.com//');
    }
  });

  it('speaks each protocol the way its clients do', () => {
    expect(byId('openai-curl')).toContain('https://api.example.com/v1/chat/completions');
    expect(byId('openai-curl')).toContain('"model":"gpt-4o-mini"');
    expect(byId('anthropic-curl')).toMatch(/x-api-key: sk-test123[\s\S]*anthropic-version: 2023-06-01/);
    expect(byId('anthropic-curl')).toContain('"model":"claude-haiku-4-5"');
    expect(byId('gemini-curl')).toContain('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(byId('claude-code')).toMatch(/ANTHROPIC_BASE_URL="https:\/\/api.example.com"\nexport ANTHROPIC_AUTH_TOKEN="sk-test123"/);
    expect(byId('codex')).toMatch(/model_provider = "tollgate"[\s\S]*base_url = "https:\/\/api.example.com\/v1"[\s\S]*env_key = "TOLLGATE_API_KEY"/);
    expect(byId('gemini-cli')).toContain('GOOGLE_GEMINI_BASE_URL="https://api.example.com"');
    expect(byId('gemini-cli')).toContain('GEMINI_API_KEY="sk-test123"');
    expect(byId('lobechat')).toContain('API proxy URL: https://api.example.com/v1');
  });

  it('keeps shell quoting intact for a prompt with a quote', () => {
    const s = buildSnippets({ ...input, models: ["it's"] }).find((x) => x.id === 'openai-curl')!.code;
    expect(s).toContain(`"model":"it'\\''s"`);
  });
});
