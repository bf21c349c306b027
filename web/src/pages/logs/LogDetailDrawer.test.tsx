import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { UsageLog } from '../../api/types';
import { renderWithProviders } from '../../test/render';
import i18n from '../../i18n';
import { candidateOutcome, LogDetailDrawer, stickyText } from './LogDetailDrawer';

const base: UsageLog = {
  id: 1,
  request_id: 'req-1',
  client_request_id: '',
  created_at: '2026-11-29T10:00:00Z',
  user_id: 2,
  username: 'ann',
  token_id: 1,
  token_name: 'ci',
  model: 'gpt-4o',
  stream: false,
  prompt_tokens: 10,
  completion_tokens: 20,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost: 50,
  price: { input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' },
  group_ratio: '1',
  status: 'success',
  http_status: 200,
  error_class: '',
  error: '',
  elapsed_ms: 120,
  first_byte_ms: 80,
  client_ip: '127.0.0.1',
  group: 'gpt-shared',
  route: 'codex2api',
};

const decision: UsageLog['decision'] = {
  policy: 'priority_weighted',
  sticky: 'moved',
  considered: [
    { group: 'gpt-shared', route: 'asxs', channel_id: 1, skipped: true, reason: 'channel_open' },
    { group: 'gpt-shared', route: 'codex2api', channel_id: 2, key_index: 0, reason: 'rate_limited' },
    { group: 'gpt-shared', route: 'codex2api', channel_id: 2, key_index: 1 },
  ],
  chosen: { group: 'gpt-shared', route: 'codex2api', channel_id: 2, key_index: 1 },
};

describe('LogDetailDrawer', () => {
  it('shows group and route to a user, with no routing decision', () => {
    renderWithProviders(<LogDetailDrawer log={base} onClose={() => undefined} />);
    expect(screen.getByTestId('log-group')).toHaveTextContent('gpt-shared');
    expect(screen.getByTestId('log-route')).toHaveTextContent('codex2api');
    expect(screen.queryByText('Routing decision')).not.toBeInTheDocument();
  });

  it('shows an admin the policy, each candidate with skipped / failed / chosen and why, and the choice', () => {
    renderWithProviders(<LogDetailDrawer log={{ ...base, decision }} onClose={() => undefined} />);
    expect(screen.getByText('Routing decision')).toBeInTheDocument();
    const section = screen.getByTestId('log-decision');
    expect(within(section).getByText('priority_weighted')).toBeInTheDocument();
    expect(within(section).getByText('Moved to another key')).toBeInTheDocument();
    expect(screen.getByTestId('log-decision-chosen')).toHaveTextContent('gpt-shared / codex2api · channel #2 · key #1');
    expect(screen.getByTestId('log-decision-link')).toHaveAttribute('href', `/console/admin/routing/decisions?request_id=${base.request_id}`);
    expect(screen.getAllByTestId('candidate-outcome').map((tag) => tag.textContent)).toEqual(['Skipped', 'Failed', 'Chosen']);
    expect(screen.getByText('Channel breaker open')).toBeInTheDocument();
    // A reason the console has no text for is shown as the server wrote it.
    expect(screen.getByText('rate_limited')).toBeInTheDocument();
  });

  it('names the sticky outcome and its level', () => {
    expect(stickyText('hit:session', i18n.t)).toBe('Kept its sticky binding (Session)');
    expect(stickyText('miss', i18n.t)).toBe('No binding yet');
    expect(stickyText('odd:thing', i18n.t)).toBe('odd (thing)');
  });

  it('tells the chosen candidate from a failed attempt on the same key', () => {
    const chosen = { route: 'r', channel_id: 2, key_index: 1 };
    expect(candidateOutcome({ route: 'r', channel_id: 2, key_index: 1 }, chosen)).toBe('chosen');
    expect(candidateOutcome({ route: 'r', channel_id: 2, key_index: 1, reason: 'server' }, chosen)).toBe('failed');
    expect(candidateOutcome({ route: 'r', channel_id: 2, skipped: true, reason: 'at_capacity' }, chosen)).toBe('skipped');
    expect(candidateOutcome({ route: 'r', channel_id: 3, key_index: 0 }, null)).toBe('considered');
  });
});
