/**
 * Connection snippets for one key: curl, Python and Node for the OpenAI, Anthropic and Gemini SDKs, the
 * coding CLIs (Claude Code, Codex CLI, Gemini CLI) and chat apps' provider settings, all filled in with the
 * site's base URL, the key and a model the key may call. Pure text: the quick-start card renders them.
 */

/** What a snippet is for; the card groups them in tabs by this. */
export type SnippetGroup = 'openai' | 'anthropic' | 'gemini' | 'cli' | 'apps';

export interface Snippet {
  /** Stable id (data-testid `snippet-<id>` in the card). */
  id: string;
  group: SnippetGroup;
  /** Label key under `connect.` (the card translates it). */
  label: string;
  /** Highlighting hint for the code block. */
  lang: 'bash' | 'python' | 'js' | 'toml' | 'text';
  code: string;
}

export interface SnippetInput {
  /** The site's public base URL without a trailing slash, e.g. https://api.example.com. */
  baseUrl: string;
  /** The key in clear, or a placeholder when it is not known. */
  apiKey: string;
  /** Models the key may call (the first of each family is used; any model works on any protocol). */
  models: readonly string[];
}

/** The base URL without trailing slashes (and a bare origin when given one with /v1). */
export function normalizeBase(url: string): string {
  return url.trim().replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The model a family's snippets name: the first of that family the key offers, else the first at all. */
export function pickModel(models: readonly string[], family: 'openai' | 'anthropic' | 'gemini'): string {
  const prefix = { openai: /^(gpt|o\d|chatgpt|text-)/i, anthropic: /^claude/i, gemini: /^gemini/i }[family];
  const fallback = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' }[family];
  return models.find((m) => prefix.test(m)) ?? models[0] ?? fallback;
}

/** A JSON string literal that is also safe inside single-quoted shell text. */
function shellJson(value: unknown): string {
  return JSON.stringify(value).replace(/'/g, `'\\''`);
}

/** Every snippet for the input, in the card's order. */
export function buildSnippets(input: SnippetInput): Snippet[] {
  const base = normalizeBase(input.baseUrl);
  const key = input.apiKey;
  const gpt = pickModel(input.models, 'openai');
  const claude = pickModel(input.models, 'anthropic');
  const gemini = pickModel(input.models, 'gemini');
  const hello = 'Hello!';
  return [
    {
      id: 'openai-curl',
      group: 'openai',
      label: 'curl',
      lang: 'bash',
      code: [
        `curl ${base}/v1/chat/completions \\`,
        `  -H "Authorization: Bearer ${key}" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d '${shellJson({ model: gpt, messages: [{ role: 'user', content: hello }] })}'`,
      ].join('\n'),
    },
    {
      id: 'openai-python',
      group: 'openai',
      label: 'python',
      lang: 'python',
      code: [
        '# pip install openai',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${base}/v1", api_key="${key}")`,
        'reply = client.chat.completions.create(',
        `    model="${gpt}",`,
        `    messages=[{"role": "user", "content": "${hello}"}],`,
        ')',
        'print(reply.choices[0].message.content)',
      ].join('\n'),
    },
    {
      id: 'openai-node',
      group: 'openai',
      label: 'node',
      lang: 'js',
      code: [
        '// npm install openai',
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${base}/v1', apiKey: '${key}' });`,
        'const reply = await client.chat.completions.create({',
        `  model: '${gpt}',`,
        `  messages: [{ role: 'user', content: '${hello}' }],`,
        '});',
        'console.log(reply.choices[0].message.content);',
      ].join('\n'),
    },
    {
      id: 'anthropic-curl',
      group: 'anthropic',
      label: 'curl',
      lang: 'bash',
      code: [
        `curl ${base}/v1/messages \\`,
        `  -H "x-api-key: ${key}" \\`,
        '  -H "anthropic-version: 2023-06-01" \\',
        '  -H "Content-Type: application/json" \\',
        `  -d '${shellJson({ model: claude, max_tokens: 1024, messages: [{ role: 'user', content: hello }] })}'`,
      ].join('\n'),
    },
    {
      id: 'anthropic-python',
      group: 'anthropic',
      label: 'python',
      lang: 'python',
      code: [
        '# pip install anthropic',
        'import anthropic',
        '',
        `client = anthropic.Anthropic(base_url="${base}", api_key="${key}")`,
        'reply = client.messages.create(',
        `    model="${claude}",`,
        '    max_tokens=1024,',
        `    messages=[{"role": "user", "content": "${hello}"}],`,
        ')',
        'print(reply.content[0].text)',
      ].join('\n'),
    },
    {
      id: 'anthropic-node',
      group: 'anthropic',
      label: 'node',
      lang: 'js',
      code: [
        '// npm install @anthropic-ai/sdk',
        "import Anthropic from '@anthropic-ai/sdk';",
        '',
        `const client = new Anthropic({ baseURL: '${base}', apiKey: '${key}' });`,
        'const reply = await client.messages.create({',
        `  model: '${claude}',`,
        '  max_tokens: 1024,',
        `  messages: [{ role: 'user', content: '${hello}' }],`,
        '});',
        'console.log(reply.content[0].text);',
      ].join('\n'),
    },
    {
      id: 'gemini-curl',
      group: 'gemini',
      label: 'curl',
      lang: 'bash',
      code: [
        `curl "${base}/v1beta/models/${gemini}:generateContent" \\`,
        `  -H "x-goog-api-key: ${key}" \\`,
        '  -H "Content-Type: application/json" \\',
        `  -d '${shellJson({ contents: [{ role: 'user', parts: [{ text: hello }] }] })}'`,
      ].join('\n'),
    },
    {
      id: 'gemini-python',
      group: 'gemini',
      label: 'python',
      lang: 'python',
      code: [
        '# pip install google-genai',
        'from google import genai',
        'from google.genai import types',
        '',
        `client = genai.Client(api_key="${key}", http_options=types.HttpOptions(base_url="${base}"))`,
        `reply = client.models.generate_content(model="${gemini}", contents="${hello}")`,
        'print(reply.text)',
      ].join('\n'),
    },
    {
      id: 'gemini-node',
      group: 'gemini',
      label: 'node',
      lang: 'js',
      code: [
        '// npm install @google/genai',
        "import { GoogleGenAI } from '@google/genai';",
        '',
        `const ai = new GoogleGenAI({ apiKey: '${key}', httpOptions: { baseUrl: '${base}' } });`,
        `const reply = await ai.models.generateContent({ model: '${gemini}', contents: '${hello}' });`,
        'console.log(reply.text);',
      ].join('\n'),
    },
    {
      id: 'claude-code',
      group: 'cli',
      label: 'claudeCode',
      lang: 'bash',
      // The site root (Claude Code adds /v1/messages); it also calls a small model, so both name one the key offers.
      code: [
        `export ANTHROPIC_BASE_URL="${base}"`,
        `export ANTHROPIC_AUTH_TOKEN="${key}"`,
        `export ANTHROPIC_MODEL="${claude}"`,
        `export ANTHROPIC_DEFAULT_HAIKU_MODEL="${claude}"`,
        'claude',
      ].join('\n'),
    },
    {
      id: 'codex',
      group: 'cli',
      label: 'codex',
      lang: 'toml',
      code: [
        '# ~/.codex/config.toml',
        `model = "${gpt}"`,
        'model_provider = "tollgate"',
        '',
        '[model_providers.tollgate]',
        'name = "Tollgate"',
        `base_url = "${base}/v1"`,
        'env_key = "TOLLGATE_API_KEY"',
        'wire_api = "responses"',
        '',
        '# then, in the shell:',
        `# export TOLLGATE_API_KEY="${key}" && codex`,
      ].join('\n'),
    },
    {
      id: 'gemini-cli',
      group: 'cli',
      label: 'geminiCli',
      lang: 'bash',
      code: [`export GOOGLE_GEMINI_BASE_URL="${base}"`, `export GEMINI_API_KEY="${key}"`, `gemini -m ${gemini}`].join('\n'),
    },
    {
      id: 'cherry-studio',
      group: 'apps',
      label: 'cherryStudio',
      lang: 'text',
      code: ['Provider type: OpenAI', `API host: ${base}`, `API key: ${key}`, `Models: ${input.models.join(', ') || gpt}`].join('\n'),
    },
    {
      id: 'lobechat',
      group: 'apps',
      label: 'lobeChat',
      lang: 'text',
      code: ['Provider: OpenAI', `API proxy URL: ${base}/v1`, `API key: ${key}`, `Models: ${input.models.join(', ') || gpt}`].join('\n'),
    },
  ];
}
