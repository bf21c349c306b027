import type { FailoverPolicy, GroupRoute, LogicalGroup, LogicalGroupInput, StickyLevel } from '../../../api/types';
import { STICKY_LEVELS } from '../../../api/types';

/** A route as the editor holds it: its place in the list is its priority. */
export interface RouteFormValues {
  name: string;
  weight?: number | null;
  channels?: number[];
}

export interface LogicalGroupFormValues {
  name: string;
  display_name?: string;
  description?: string;
  enabled: boolean;
  ratio: string;
  models?: string[];
  /** Every user may use the group (the API's access.all, which is also `selectable`). */
  access_all: boolean;
  access_tiers?: string[];
  /** User ids as typed (tags). */
  access_users?: string[];
  sticky_levels?: StickyLevel[];
  sticky_ttl?: Partial<Record<StickyLevel, number | null>>;
  failover?: Partial<Record<keyof FailoverPolicy, number | null>>;
  return_to_primary_s?: number | null;
  routes?: RouteFormValues[];
}

export const FAILOVER_FIELDS: (keyof FailoverPolicy)[] = ['consecutive_failures', 'cooldown_s', 'max_attempts', 'deadline_s'];

/** The gap between neighbouring routes' priorities, so a later hand edit can slot one in between. */
export const PRIORITY_STEP = 10;

export const NEW_GROUP_VALUES: LogicalGroupFormValues = {
  name: '',
  display_name: '',
  description: '',
  enabled: true,
  ratio: '1',
  models: [],
  access_all: true,
  access_tiers: [],
  access_users: [],
  sticky_levels: [],
  sticky_ttl: {},
  failover: {},
  return_to_primary_s: 0,
  routes: [],
};

/** Routes highest priority first; equal priorities keep their stored order. */
export function sortRoutes(routes: GroupRoute[] | null | undefined): GroupRoute[] {
  return (routes ?? [])
    .map((route, i) => ({ route, i }))
    .sort((a, b) => b.route.priority - a.route.priority || a.i - b.i)
    .map(({ route }) => route);
}

/** The priority the route at `index` of `count` gets: the top one is highest, the last one PRIORITY_STEP. */
export function priorityAt(index: number, count: number): number {
  return (count - index) * PRIORITY_STEP;
}

/** A copy of `list` with the item at `from` moved to `to`. */
export function moveItem<T>(list: T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= list.length || to >= list.length) return list.slice();
  const next = list.slice();
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return next;
}

const zeroToNull = (n: number | undefined) => (n ? n : null);

/** A stored group as editor values (routes in priority order). */
export function groupToForm(group: LogicalGroup): LogicalGroupFormValues {
  const ttl: Partial<Record<StickyLevel, number | null>> = {};
  for (const level of STICKY_LEVELS) ttl[level] = zeroToNull(group.sticky?.ttl_s?.[level]);
  const failover: Partial<Record<keyof FailoverPolicy, number | null>> = {};
  for (const field of FAILOVER_FIELDS) failover[field] = zeroToNull(group.failover?.[field]);
  return {
    name: group.name,
    display_name: group.display_name ?? '',
    description: group.description ?? '',
    enabled: group.status !== 'disabled',
    ratio: group.ratio || '1',
    models: group.models ?? [],
    access_all: group.access?.all ?? group.selectable ?? true,
    access_tiers: group.access?.tiers ?? [],
    access_users: (group.access?.users ?? []).map(String),
    sticky_levels: group.sticky?.levels ?? [],
    sticky_ttl: ttl,
    failover,
    return_to_primary_s: group.return_to_primary_s || 0,
    routes: sortRoutes(group.routes).map((r) => ({ name: r.name, weight: r.weight, channels: r.channels ?? [] })),
  };
}

/** Editor values → API body; empty policy fields are 0 (the site default), priorities follow the list order. */
export function formToGroup(values: LogicalGroupFormValues): LogicalGroupInput {
  const levels = STICKY_LEVELS.filter((level) => values.sticky_levels?.includes(level));
  const ttl: Partial<Record<StickyLevel, number>> = {};
  for (const level of levels) {
    const v = values.sticky_ttl?.[level];
    if (v) ttl[level] = v;
  }
  const failover = {} as FailoverPolicy;
  for (const field of FAILOVER_FIELDS) failover[field] = values.failover?.[field] ?? 0;
  const routes = values.routes ?? [];
  const users = [...new Set((values.access_users ?? []).map((u) => Number(String(u).trim())).filter((n) => Number.isInteger(n) && n > 0))];
  return {
    name: values.name.trim(),
    display_name: values.display_name?.trim() ?? '',
    description: values.description?.trim() ?? '',
    status: values.enabled ? 'enabled' : 'disabled',
    ratio: String(values.ratio).trim(),
    selectable: !!values.access_all,
    models: values.models ?? [],
    access: values.access_all ? { all: true, tiers: [], users: [] } : { all: false, tiers: values.access_tiers ?? [], users },
    sticky: { levels, ttl_s: ttl },
    failover,
    return_to_primary_s: values.return_to_primary_s ?? 0,
    routes: routes.map((r, i) => ({
      name: r.name.trim(),
      priority: priorityAt(i, routes.length),
      weight: r.weight ?? 1,
      channels: r.channels ?? [],
    })),
  };
}

/**
 * The editor field a server validation error names (`routes[1].channels`, `failover.cooldown_s`,
 * `sticky.ttl_s.session`, `access.users`…), or null when the editor has no such field.
 */
export function groupErrorPath(field: string | undefined): (string | number)[] | null {
  if (!field) return null;
  const route = /^routes\[(\d+)\]\.(name|weight|channels)$/.exec(field);
  if (route) return ['routes', Number(route[1]), route[2]];
  const failover = /^failover\.(\w+)$/.exec(field);
  if (failover && (FAILOVER_FIELDS as string[]).includes(failover[1])) return ['failover', failover[1]];
  const ttl = /^sticky\.ttl_s\.(\w+)$/.exec(field);
  if (ttl && (STICKY_LEVELS as string[]).includes(ttl[1])) return ['sticky_ttl', ttl[1]];
  const simple: Record<string, string> = {
    name: 'name',
    display_name: 'display_name',
    description: 'description',
    ratio: 'ratio',
    models: 'models',
    'access.tiers': 'access_tiers',
    'access.users': 'access_users',
    'sticky.levels': 'sticky_levels',
    return_to_primary_s: 'return_to_primary_s',
  };
  return simple[field] ? [simple[field]] : null;
}

/** True when every access-list entry is a positive integer user id. */
export function validUserIds(ids: string[] | undefined): boolean {
  return (ids ?? []).every((id) => /^[1-9]\d*$/.test(String(id).trim()));
}
