/** 快速接入卡片（连接设置与示例代码）的中文文本。 */
const connect = {
  title: '快速接入',
  baseUrl: '接口地址',
  openaiBase: 'OpenAI 兼容地址',
  key: 'API 密钥',
  keyHint: '密钥只在创建时显示一次；可在密钥列表中点击“查看”再次显示。',
  placeholderHint: '下方示例使用 $TOLLGATE_API_KEY：请将其设为你的密钥，或查看某个密钥以自动填入。',
  group_openai: 'OpenAI',
  group_anthropic: 'Anthropic',
  group_gemini: 'Gemini',
  group_cli: '编程命令行工具',
  group_apps: '聊天客户端',
  snippet_curl: 'curl',
  snippet_python: 'Python',
  snippet_node: 'Node.js',
  snippet_claudeCode: 'Claude Code',
  snippet_codex: 'Codex CLI（~/.codex/config.toml）',
  snippet_geminiCli: 'Gemini CLI',
  snippet_cherryStudio: 'Cherry Studio',
  snippet_lobeChat: 'LobeChat',
};

export default connect;
