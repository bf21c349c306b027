/** English text of the quick-start card (connection settings and snippets). */
const connect = {
  title: 'Quick start',
  baseUrl: 'Base URL',
  openaiBase: 'OpenAI-compatible base',
  key: 'API key',
  keyHint: 'Your key is shown once when you create it; use Reveal in the key list to see it again.',
  placeholderHint: 'The snippets below use $TOLLGATE_API_KEY: set it to your key, or reveal a key to fill it in.',
  group_openai: 'OpenAI',
  group_anthropic: 'Anthropic',
  group_gemini: 'Gemini',
  group_cli: 'Coding CLIs',
  group_apps: 'Chat apps',
  snippet_curl: 'curl',
  snippet_python: 'Python',
  snippet_node: 'Node.js',
  snippet_claudeCode: 'Claude Code',
  snippet_codex: 'Codex CLI (~/.codex/config.toml)',
  snippet_geminiCli: 'Gemini CLI',
  snippet_cherryStudio: 'Cherry Studio',
  snippet_lobeChat: 'LobeChat',
};

export default connect;
