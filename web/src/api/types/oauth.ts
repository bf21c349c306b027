/** An enabled external sign-in provider, as GET /api/status lists it. */
export interface OAuthProviderInfo {
  slug: string;
  name: string;
  type: 'github' | 'oidc';
}

/** A provider account linked to the signed-in user. */
export interface Identity {
  id: number;
  user_id: number;
  provider: string;
  subject: string;
  email: string;
  created_at: string;
}

export interface IdentitiesResponse {
  identities: Identity[];
  /** False for an account made by a provider sign-in that has not set a password yet. */
  has_password: boolean;
}

/** settings.oauth: GitHub and OIDC providers (client secrets come back masked). */
export interface OAuthSettings {
  github: {
    enabled: boolean;
    client_id: string;
    client_secret: string;
    auth_url: string;
    token_url: string;
    api_url: string;
  };
  oidc: OIDCProviderSettings[];
}

export interface OIDCProviderSettings {
  enabled: boolean;
  slug: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  scopes: string[];
}
