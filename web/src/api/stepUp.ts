/** The header that carries a fresh two-factor code for a sensitive action (step-up). */
export const TOTP_HEADER = 'X-Tollgate-TOTP';

/** Headers for a call made with a step-up code (none without one). */
export function stepUpHeaders(code?: string): Record<string, string> | undefined {
  return code ? { [TOTP_HEADER]: code } : undefined;
}
