import { describe, expect, it } from 'vitest';
import type { LogicalGroup } from '../../../api/types';
import { formToGroup, groupErrorPath, groupToForm, moveItem, NEW_GROUP_VALUES, priorityAt, sortRoutes, validUserIds } from './groupForm';

const stored: LogicalGroup = {
  name: 'gpt-shared',
  display_name: 'GPT shared',
  description: 'two lines',
  status: 'enabled',
  ratio: '1.5',
  selectable: true,
  models: ['gpt-4o'],
  access: { all: false, tiers: ['vip'], users: [7] },
  sticky: { levels: ['session', 'conversation'], ttl_s: { session: 600 } },
  failover: { consecutive_failures: 2, cooldown_s: 60, max_attempts: 0, deadline_s: 0 },
  return_to_primary_s: 60,
  routes: [
    { name: 'codex2api', priority: 10, weight: 1, channels: [2] },
    { name: 'asxs', priority: 20, weight: 3, channels: [1, 3] },
    { name: 'spare', priority: 10, weight: 1, channels: [4] },
  ],
};

describe('logical group form', () => {
  it('orders routes highest priority first and keeps the stored order on ties', () => {
    expect(sortRoutes(stored.routes).map((r) => r.name)).toEqual(['asxs', 'codex2api', 'spare']);
    expect(sortRoutes(null)).toEqual([]);
  });

  it('gives the top route the highest priority', () => {
    expect([0, 1, 2].map((i) => priorityAt(i, 3))).toEqual([30, 20, 10]);
  });

  it('moves one item and leaves the input alone', () => {
    const list = ['a', 'b', 'c'];
    expect(moveItem(list, 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(list, 0, 1)).toEqual(['b', 'a', 'c']);
    expect(moveItem(list, 0, 5)).toEqual(['a', 'b', 'c']);
    expect(list).toEqual(['a', 'b', 'c']);
  });

  it('reads a stored group into the editor with 0 policy fields left empty', () => {
    const values = groupToForm(stored);
    expect(values.routes?.map((r) => r.name)).toEqual(['asxs', 'codex2api', 'spare']);
    expect(values.failover).toEqual({ consecutive_failures: 2, cooldown_s: 60, max_attempts: null, deadline_s: null });
    expect(values.sticky_ttl).toMatchObject({ session: 600, conversation: null });
    expect(values.access_all).toBe(false);
    expect(values.access_users).toEqual(['7']);
    expect(values.enabled).toBe(true);
  });

  it('writes priorities from the list order after a reorder', () => {
    const values = groupToForm(stored);
    const body = formToGroup({ ...values, routes: moveItem(values.routes ?? [], 1, 0) });
    expect(body.routes).toEqual([
      { name: 'codex2api', priority: 30, weight: 1, channels: [2] },
      { name: 'asxs', priority: 20, weight: 3, channels: [1, 3] },
      { name: 'spare', priority: 10, weight: 1, channels: [4] },
    ]);
  });

  it('round-trips the policies, in the canonical level order, with empty fields as 0', () => {
    const body = formToGroup(groupToForm(stored));
    expect(body.sticky).toEqual({ levels: ['conversation', 'session'], ttl_s: { session: 600 } });
    expect(body.failover).toEqual(stored.failover);
    expect(body.return_to_primary_s).toBe(60);
    expect(body.access).toEqual({ all: false, tiers: ['vip'], users: [7] });
    expect(body).toMatchObject({ name: 'gpt-shared', display_name: 'GPT shared', status: 'enabled', ratio: '1.5', selectable: false });
  });

  it('drops TTLs of unchecked levels and lists when access is for everyone', () => {
    const body = formToGroup({
      ...NEW_GROUP_VALUES,
      name: ' g ',
      enabled: false,
      sticky_levels: ['bucket'],
      sticky_ttl: { bucket: 30, session: 900 },
      access_all: true,
      access_tiers: ['vip'],
      access_users: ['3'],
      routes: [{ name: ' only ', weight: null, channels: [9] }],
    });
    expect(body.name).toBe('g');
    expect(body.status).toBe('disabled');
    expect(body.sticky).toEqual({ levels: ['bucket'], ttl_s: { bucket: 30 } });
    expect(body.access).toEqual({ all: true, tiers: [], users: [] });
    expect(body.failover).toEqual({ consecutive_failures: 0, cooldown_s: 0, max_attempts: 0, deadline_s: 0 });
    expect(body.routes).toEqual([{ name: 'only', priority: 10, weight: 1, channels: [9] }]);
  });

  it('reads a group with null lists (as the API sends a bare group) and keeps it routeless', () => {
    const bare = {
      ...stored,
      models: null,
      access: { all: true, tiers: null, users: null },
      sticky: { levels: null, ttl_s: null },
      routes: null,
    } as unknown as LogicalGroup;
    const values = groupToForm(bare);
    expect(values.routes).toEqual([]);
    const body = formToGroup(values);
    expect(body).toMatchObject({ models: [], routes: [], selectable: true, access: { all: true, tiers: [], users: [] } });
    expect(body.sticky).toEqual({ levels: [], ttl_s: {} });
  });

  it('maps the server\'s field names onto editor fields', () => {
    expect(groupErrorPath('routes[1].channels')).toEqual(['routes', 1, 'channels']);
    expect(groupErrorPath('failover.cooldown_s')).toEqual(['failover', 'cooldown_s']);
    expect(groupErrorPath('sticky.ttl_s.session')).toEqual(['sticky_ttl', 'session']);
    expect(groupErrorPath('access.users')).toEqual(['access_users']);
    expect(groupErrorPath('ratio')).toEqual(['ratio']);
    expect(groupErrorPath('routes')).toBeNull();
    expect(groupErrorPath(undefined)).toBeNull();
  });

  it('accepts only positive whole user ids', () => {
    expect(validUserIds(['1', ' 42 '])).toBe(true);
    expect(validUserIds(['0'])).toBe(false);
    expect(validUserIds(['bob'])).toBe(false);
    expect(validUserIds(undefined)).toBe(true);
  });
});
