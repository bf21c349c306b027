import type { Channel, ChannelConfig, ChannelInput, ChannelType, CostPrice } from '../../../api/types';
import { fromRows, toRows, type KeyValueRow } from '../../../components/KeyValueEditor';

export const CHANNEL_TYPES: ChannelType[] = ['openai', 'openai-compatible', 'anthropic', 'gemini', 'azure', 'vertex', 'bedrock'];

/** The OpenAI-compatible vendor presets the server knows (its table fills the base URL when left empty). */
export const PRESETS = ['deepseek', 'openrouter', 'siliconflow', 'moonshot', 'zhipu', 'qwen', 'xai', 'mistral', 'groq', 'ollama'] as const;

/** Whether the server derives the base URL for these settings (preset, Vertex or Bedrock region). */
export function baseUrlOptional(type: ChannelType, preset?: string): boolean {
  return type === 'vertex' || type === 'bedrock' || (type === 'openai-compatible' && !!preset);
}

export const COST_FIELDS = ['input', 'output', 'cache_read', 'cache_write', 'per_call'] as const;

/** How the upstream's cost is known: not at all, a price list (USD per 1M / per call), or a multiple of the sell price. */
export type CostMode = 'none' | 'price' | 'ratio';

/** One per-model cost override row of the form. */
export interface CostOverrideRow extends CostPrice {
  model: string;
}

const EMPTY_COST: CostPrice = { input: '', output: '', cache_read: '', cache_write: '', per_call: '' };

/** A stored price as form text: zeros become empty boxes. */
function costToText(p: Partial<CostPrice> | null | undefined): CostPrice {
  const out = { ...EMPTY_COST };
  for (const f of COST_FIELDS) {
    const v = String(p?.[f] ?? '').trim();
    out[f] = v === '' || Number(v) === 0 ? '' : v;
  }
  return out;
}

/** Form text as a price for the API: trimmed, empty as "0". */
function textToCost(p: Partial<CostPrice> | null | undefined): CostPrice {
  const out = { ...EMPTY_COST };
  for (const f of COST_FIELDS) out[f] = String(p?.[f] ?? '').trim() || '0';
  return out;
}

function isZeroCost(p: Partial<CostPrice> | null | undefined): boolean {
  return !p || COST_FIELDS.every((f) => Number(p[f] || 0) === 0);
}

export interface ChannelFormValues {
  type: ChannelType;
  name: string;
  base_url: string;
  keys_text?: string;
  key_strategy: 'random' | 'round_robin';
  models: string[];
  model_mapping: KeyValueRow[];
  groups: string[];
  priority: number;
  weight: number;
  enabled: boolean;
  header_override: KeyValueRow[];
  body_set: KeyValueRow[];
  body_delete: string[];
  header_passthrough: string[];
  status_code_mapping: KeyValueRow[];
  test_model?: string;
  timeouts: { connect_ms?: number | null; first_byte_ms?: number | null; idle_ms?: number | null; total_ms?: number | null };
  tag?: string;
  /** Most concurrent upstream requests on the channel / per key (empty = no cap). */
  max_concurrency?: number | null;
  key_max_concurrency?: number | null;
  cost_mode: CostMode;
  cost_price: CostPrice;
  cost_ratio?: string;
  cost_prices: CostOverrideRow[];
  /** Type-specific settings, in the API's shape (maps as rows below). */
  config: { preset?: string; azure?: { api_version?: string }; vertex?: { project?: string; region?: string }; bedrock?: { region?: string } };
  azure_deployments: KeyValueRow[];
  bedrock_model_ids: KeyValueRow[];
  /** Vertex: the service-account JSON key file (pasted or uploaded); becomes the channel's one key. */
  vertex_sa_json?: string;
  /** Bedrock: the access key pair; becomes the channel's key "ACCESS_KEY_ID:SECRET". */
  bedrock_access_key?: string;
  bedrock_secret_key?: string;
}

export const DEFAULT_CHANNEL_VALUES: ChannelFormValues = {
  type: 'openai',
  name: '',
  base_url: '',
  keys_text: '',
  key_strategy: 'random',
  models: [],
  model_mapping: [],
  groups: ['default'],
  priority: 0,
  weight: 1,
  enabled: true,
  header_override: [],
  body_set: [],
  body_delete: [],
  header_passthrough: [],
  status_code_mapping: [],
  test_model: '',
  timeouts: { connect_ms: null, first_byte_ms: null, idle_ms: null, total_ms: null },
  tag: '',
  max_concurrency: null,
  key_max_concurrency: null,
  cost_mode: 'none',
  cost_price: { ...EMPTY_COST },
  cost_ratio: '',
  cost_prices: [],
  config: {},
  azure_deployments: [],
  bedrock_model_ids: [],
  vertex_sa_json: '',
  bedrock_access_key: '',
  bedrock_secret_key: '',
};

/** One key per line; blank lines and surrounding spaces dropped, duplicates removed. */
export function parseKeys(text: string | undefined): string[] {
  return [...new Set((text ?? '').split(/\r?\n/).map((k) => k.trim()).filter(Boolean))];
}

/** A body-override value: JSON when it parses (numbers, booleans, objects), else the plain string. */
export function parseOverrideValue(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

/** The channel as form values for editing (keys stay empty: they come back masked). */
export function channelToForm(channel: Channel): ChannelFormValues {
  return {
    type: channel.type,
    name: channel.name,
    base_url: channel.base_url,
    keys_text: '',
    key_strategy: channel.key_strategy || 'random',
    models: channel.models ?? [],
    model_mapping: toRows(channel.model_mapping),
    groups: channel.groups ?? [],
    priority: channel.priority ?? 0,
    weight: channel.weight ?? 1,
    enabled: channel.status === 'enabled',
    header_override: toRows(channel.header_override),
    body_set: toRows(channel.body_override?.set),
    body_delete: channel.body_override?.delete ?? [],
    header_passthrough: channel.header_passthrough ?? [],
    status_code_mapping: toRows(channel.status_code_mapping),
    test_model: channel.test_model ?? '',
    timeouts: { ...DEFAULT_CHANNEL_VALUES.timeouts, ...channel.timeouts },
    tag: channel.tag ?? '',
    max_concurrency: channel.max_concurrency || null,
    key_max_concurrency: channel.key_max_concurrency || null,
    cost_mode: channel.cost_ratio ? 'ratio' : isZeroCost(channel.cost_price) ? 'none' : 'price',
    cost_price: costToText(channel.cost_price),
    cost_ratio: channel.cost_ratio ?? '',
    cost_prices: Object.entries(channel.cost_prices ?? {}).map(([model, p]) => ({ model, ...costToText(p) })),
    config: {
      preset: channel.config?.preset,
      azure: { api_version: channel.config?.azure?.api_version },
      vertex: { project: channel.config?.vertex?.project, region: channel.config?.vertex?.region },
      bedrock: { region: channel.config?.bedrock?.region },
    },
    azure_deployments: toRows(channel.config?.azure?.deployments),
    bedrock_model_ids: toRows(channel.config?.bedrock?.model_ids),
    vertex_sa_json: '',
    bedrock_access_key: '',
    bedrock_secret_key: '',
  };
}

/** The settings of the chosen type for the API (other types' settings are not sent). */
export function configFor(values: ChannelFormValues): ChannelConfig {
  const c = values.config ?? {};
  switch (values.type) {
    case 'openai-compatible':
      return c.preset ? { preset: c.preset } : {};
    case 'azure':
      return { azure: { api_version: (c.azure?.api_version ?? '').trim(), deployments: fromRows(values.azure_deployments) } };
    case 'vertex':
      return { vertex: { project: (c.vertex?.project ?? '').trim(), region: (c.vertex?.region ?? '').trim() } };
    case 'bedrock':
      return { bedrock: { region: (c.bedrock?.region ?? '').trim(), model_ids: fromRows(values.bedrock_model_ids) } };
    default:
      return {};
  }
}

/** The keys the form holds for its type: the Vertex key file or the Bedrock key pair, else one per line. */
export function keysFor(values: ChannelFormValues): string[] {
  if (values.type === 'vertex') {
    const sa = (values.vertex_sa_json ?? '').trim();
    return sa ? [sa] : [];
  }
  if (values.type === 'bedrock') {
    const ak = (values.bedrock_access_key ?? '').trim();
    const sk = (values.bedrock_secret_key ?? '').trim();
    return ak && sk ? [`${ak}:${sk}`] : [];
  }
  return parseKeys(values.keys_text);
}

/**
 * Form values → API body. On edit, an empty keys box keeps the stored keys; a status the admin
 * did not touch (auto-disabled) is left alone.
 */
export function formToChannel(values: ChannelFormValues, existing?: Channel): ChannelInput {
  const statusCodes: Record<string, number> = {};
  for (const [from, to] of Object.entries(fromRows(values.status_code_mapping))) statusCodes[from] = Number(to);
  const bodySet: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fromRows(values.body_set))) bodySet[k] = parseOverrideValue(v);
  const timeouts = {
    connect_ms: values.timeouts?.connect_ms ?? 0,
    first_byte_ms: values.timeouts?.first_byte_ms ?? 0,
    idle_ms: values.timeouts?.idle_ms ?? 0,
    total_ms: values.timeouts?.total_ms ?? 0,
  };
  const body: ChannelInput = {
    type: values.type,
    name: values.name.trim(),
    base_url: values.base_url.trim().replace(/\/+$/, ''),
    key_strategy: values.key_strategy,
    models: values.models ?? [],
    model_mapping: fromRows(values.model_mapping),
    groups: values.groups ?? [],
    priority: values.priority ?? 0,
    weight: values.weight ?? 1,
    header_override: fromRows(values.header_override),
    header_passthrough: values.header_passthrough ?? [],
    body_override: { set: bodySet, delete: values.body_delete ?? [] },
    status_code_mapping: statusCodes,
    test_model: values.test_model?.trim() ?? '',
    timeouts,
    tag: values.tag?.trim() ?? '',
    max_concurrency: values.max_concurrency ?? 0,
    key_max_concurrency: values.key_max_concurrency ?? 0,
    // Either a price or a ratio: the other one goes empty (the server refuses both).
    cost_price: values.cost_mode === 'price' ? textToCost(values.cost_price) : textToCost(null),
    cost_ratio: values.cost_mode === 'ratio' ? (values.cost_ratio ?? '').trim() : '',
    cost_prices: Object.fromEntries(
      (values.cost_prices ?? []).filter((r) => r?.model?.trim()).map((r) => [r.model.trim(), textToCost(r)]),
    ),
  };
  body.config = configFor(values);
  const keys = keysFor(values);
  if (keys.length > 0 || !existing) body.keys = keys;
  const wasEnabled = existing ? existing.status === 'enabled' : undefined;
  if (!existing || wasEnabled !== values.enabled) body.status = values.enabled ? 'enabled' : 'disabled';
  return body;
}
