import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { selfKey } from './auth';
import { api } from './http';

/** Strategies metric-driven routing knows (service/routing). */
export const STRATEGIES = ['priority', 'performance', 'cost', 'balanced', 'round_robin', 'least_busy'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Routing preferences of a profile, a key or a request (RoutePrefs in docs/API.md). */
export interface RoutePrefs {
  strategy?: string;
  prefer?: string[];
  avoid?: string[];
  max_price?: number;
  min_success?: number;
  max_p95_ms?: number;
  require?: string[];
}

/** A group × model's routing configuration (RouteTuning); 0 fields inherit. */
export interface RouteTuning {
  strategy?: string;
  weights: { latency: number; success: number; cost: number };
  min_samples?: number;
  failure_threshold?: number;
  recovery_s?: number;
  max_attempts?: number;
  top_k?: number;
  min_share?: number;
  temperature?: number;
  explore?: number;
  latency_ref_ms?: number;
  cost_ref?: number;
  live_weight?: number;
}

export interface RoutingConfigRow {
  group: string;
  model: string;
  tuning: RouteTuning;
  updated_at: string;
  effective: RouteTuning;
}

export interface RoutingModels {
  items: RoutingConfigRow[];
  defaults: RouteTuning;
  global: RouteTuning;
  strategies: string[];
}

export interface ScoreInputs {
  success: number;
  latency_ms: number;
  first_byte_ms?: number;
  p95_ms?: number;
  price: number;
  samples: number;
  source?: string;
  active: number;
  latency_score: number;
  success_score: number;
  cost_score: number;
}

/** One candidate of a ranking: the simulator's and the decision log's. */
export interface RankedCandidate {
  channel_id: number;
  name: string;
  group: string;
  route?: string;
  score: number;
  share: number;
  inputs?: ScoreInputs;
  exploring?: boolean;
  demoted?: boolean;
  excluded?: boolean;
  pref?: string;
  reason: string;
}

export interface SimulateInput {
  model: string;
  group?: string;
  token_id?: number;
  user_id?: number;
  preferences?: RoutePrefs;
}

export interface SimulateResult {
  strategy: string;
  groups: string[];
  preferences: RoutePrefs;
  candidates: RankedCandidate[];
  decision_us: number;
}

export interface RoutingDecisionRow {
  id: number;
  request_id: string;
  created_at: string;
  model: string;
  group: string;
  user_id: number;
  strategy: string;
  channel_id: number;
  reason: string;
  decision_us: number;
  candidates: { ranking: RankedCandidate[]; prefs?: RoutePrefs } | null;
}

export interface DecisionFilter {
  request_id?: string;
  model?: string;
  cursor?: number;
}

const modelsKey = ['admin-routing-models'] as const;

export function useRoutingModels() {
  return useQuery({ queryKey: modelsKey, queryFn: () => api.get<RoutingModels>('/api/admin/routing/models') });
}

const rowPath = (group: string, model: string) =>
  `/api/admin/routing/models/${encodeURIComponent(group)}/${encodeURIComponent(model)}`;

export function usePutRoutingModel() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ group, model, body }: { group: string; model: string; body: RouteTuning }) =>
      api.put<RoutingConfigRow>(rowPath(group, model), body),
    onSuccess: () => qc.invalidateQueries({ queryKey: modelsKey }),
  });
}

export function useDeleteRoutingModel() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ group, model }: { group: string; model: string }) => api.del(rowPath(group, model)),
    onSuccess: () => qc.invalidateQueries({ queryKey: modelsKey }),
  });
}

export function useSimulate() {
  return useMutation({
    mutationFn: (body: SimulateInput) => api.post<SimulateResult>('/api/routing/simulate', body),
  });
}

export function useRoutingDecisions(filter: DecisionFilter) {
  return useQuery({
    queryKey: ['admin-routing-decisions', filter],
    queryFn: () =>
      api.get<{ items: RoutingDecisionRow[]; next_cursor: number | null }>('/api/admin/routing/decisions', {
        request_id: filter.request_id || undefined,
        model: filter.model || undefined,
        cursor: filter.cursor || undefined,
      }),
  });
}

export function useUpdateRoutingPrefs() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: RoutePrefs) => api.patch<RoutePrefs>('/api/user/routing', body),
    onSuccess: () => qc.invalidateQueries({ queryKey: selfKey }),
  });
}
