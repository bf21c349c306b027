import type { FleetStats } from '../../../api/types';

export const FLEET_WINDOWS = ['5m', '1h', '24h'] as const;

/** True when the window saw at least one upstream attempt (a success rate means something only then). */
export function hasTraffic(stats: FleetStats | null | undefined): stats is FleetStats {
  return !!stats && stats.attempts > 0;
}
