// Logical groups, routes, sticky sessions and price tiers (docs/API.md).

import type { EnabledStatus } from '../types';

export interface Group {
  name: string;
  description: string;
  ratio: string;
  selectable: boolean;
}

/** A group the signed-in user may use (GET /api/user/groups). */
export interface UserGroup {
  name: string;
  display_name?: string;
  description?: string;
  ratio: string;
  models?: string[];
}

export type StickyLevel = 'conversation' | 'session' | 'user_model' | 'bucket';
export const STICKY_LEVELS: StickyLevel[] = ['conversation', 'session', 'user_model', 'bucket'];

export interface StickyPolicy {
  levels: StickyLevel[];
  /** TTL per level in seconds (absent or 0 = the default). */
  ttl_s: Partial<Record<StickyLevel, number>>;
}

/** Failover policy of a group; 0 in any field means the site default. */
export interface FailoverPolicy {
  consecutive_failures: number;
  cooldown_s: number;
  max_attempts: number;
  deadline_s: number;
}

export interface GroupAccess {
  all: boolean;
  tiers: string[];
  users: number[];
}

/** A named pool of channels inside a logical group. */
export interface GroupRoute {
  name: string;
  /** Higher is tried first. */
  priority: number;
  weight: number;
  channels: number[];
}

/** A logical group: what a key routes through, with its own price ratio and policies. */
export interface LogicalGroup {
  name: string;
  display_name: string;
  description: string;
  status: EnabledStatus;
  ratio: string;
  selectable: boolean;
  models: string[];
  access: GroupAccess;
  sticky: StickyPolicy;
  failover: FailoverPolicy;
  /** Seconds the primary route must be healthy before sessions return to it (0 = off). */
  return_to_primary_s: number;
  routes: GroupRoute[];
  created_at?: string;
  updated_at?: string;
}

export type LogicalGroupInput = Omit<LogicalGroup, 'created_at' | 'updated_at'>;

/** The site defaults a group's 0 / empty policy fields fall back to. */
export interface LogicalGroupDefaults {
  sticky: StickyPolicy;
  failover: FailoverPolicy;
  return_to_primary_s?: number;
}

export interface StickyBinding {
  kind: string;
  group?: string;
  route: string;
  channel_id: number;
  key_index: number;
  since: string;
}

/** GET /api/admin/sticky: live sticky bindings of a group, counted per route. */
export interface StickyView {
  group: string;
  model: string;
  total: number;
  /** Bindings counted (up to a cap); truncated when there were more. */
  counted?: number;
  truncated?: boolean;
  /** Per route that serves the bindings, with that route's breaker state. */
  routes: { group?: string; route: string; count: number; state?: string }[];
  bindings: StickyBinding[];
}

/** A price tier users belong to (e.g. VIP ×0.8). */
export interface Tier {
  name: string;
  description: string;
  ratio: string;
  /** How many users are in the tier. */
  users: number;
  created_at?: string;
  updated_at?: string;
}

export interface TierInput {
  name?: string;
  ratio?: string;
  description?: string;
}
