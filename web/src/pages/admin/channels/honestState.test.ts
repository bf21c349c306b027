import { describe, expect, it } from 'vitest';
import { honestState } from './HealthTag';

describe('honestState', () => {
  it('says no data for a closed breaker without a call in the hour', () => {
    expect(honestState('closed', { state: 'closed', success_rate: 1, latency_ms: 0, requests_1h: 0 })).toBe('no_data');
    expect(honestState('closed', { state: 'closed', success_rate: 1 })).toBe('no_data');
  });
  it('says failing when the hour’s calls (tests included) mostly failed', () => {
    expect(honestState('closed', { state: 'closed', success_rate: 0, requests_1h: 2 })).toBe('failing');
  });
  it('goes by the latest test without live traffic', () => {
    const at = '2026-12-03T10:00:00Z';
    expect(honestState('closed', { state: 'closed', requests_1h: 0, last_test: { ok: true, latency_ms: 12, at } })).toBe('closed');
    expect(honestState('closed', { state: 'closed', requests_1h: 0, last_test: { ok: false, latency_ms: 3, at } })).toBe('failing');
    // A pass after failed tests: the failures in the hour do not keep it failing.
    expect(honestState('closed', { state: 'closed', success_rate: 0, requests_1h: 2, last_test: { ok: true, latency_ms: 9, at } })).toBe('closed');
  });
  it('keeps healthy with traffic, and every other state as it is', () => {
    expect(honestState('closed', { state: 'closed', success_rate: 0.9, requests_1h: 10 })).toBe('closed');
    expect(honestState('closed', { state: 'closed', requests_1h: 0, fleet_1h: { attempts: 3 } as never })).toBe('closed');
    expect(honestState('open', { state: 'open', requests_1h: 0 })).toBe('open');
    expect(honestState(undefined, undefined)).toBeUndefined();
  });
});
