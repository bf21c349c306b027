import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Channel, FleetStats } from '../../../api/types';
import { renderWithProviders } from '../../../test/render';
import { FleetHourCell, FleetSection } from './FleetSection';

const stats = (over: Partial<FleetStats>): FleetStats => ({
  channel_id: 7,
  requests: 0,
  attempts: 0,
  successes: 0,
  success_rate: 0,
  classes: null,
  latency_avg_ms: 0,
  latency_p50_ms: 0,
  latency_p95_ms: 0,
  first_byte_p50_ms: 0,
  first_byte_p95_ms: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  ...over,
});

describe('fleet numbers', () => {
  it('shows each window, and "No traffic" instead of a rate when nothing was attempted', () => {
    renderWithProviders(
      <FleetSection
        fleet={{
          '5m': stats({}),
          '1h': stats({ requests: 4, attempts: 5, successes: 4, success_rate: 0.8, classes: { ok: 4, timeout: 1 } }),
          '24h': stats({ requests: 40, attempts: 40, successes: 40, success_rate: 1 }),
        }}
      />,
    );
    expect(within(screen.getByTestId('fleet-5m')).getAllByText('No traffic').length).toBeGreaterThan(0);
    expect(within(screen.getByTestId('fleet-5m')).queryByText('100%')).not.toBeInTheDocument();
    expect(screen.getByTestId('fleet-rate-1h')).toHaveTextContent('80%');
    expect(screen.getByText('timeout 1')).toBeInTheDocument();
    expect(screen.getByTestId('fleet-rate-24h')).toHaveTextContent('100%');
  });

  it('shows the last hour in the channel list', () => {
    const channel = { id: 7, health: { state: 'closed', fleet_1h: stats({ requests: 12, attempts: 12, success_rate: 0.75 }) } } as Channel;
    renderWithProviders(<FleetHourCell channel={channel} />);
    expect(screen.getByTestId('fleet-1h-7')).toHaveTextContent('12 req · 75%');
  });

  it('says "No traffic" for a channel without fleet numbers', () => {
    renderWithProviders(<FleetHourCell channel={{ id: 8, health: { state: 'closed', success_rate: 1 } } as Channel} />);
    expect(screen.getByTestId('fleet-1h-8')).toHaveTextContent('No traffic');
  });
});
