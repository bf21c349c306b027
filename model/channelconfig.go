package model

// ChannelConfig holds the settings only some channel types need, in one JSON column (`config`). Secrets never
// live here: a Vertex service-account JSON and Bedrock credentials are the channel's keys, sealed like every key.
type ChannelConfig struct {
	// Preset names an OpenAI-compatible vendor (deepseek, openrouter, ...) whose quirks the adaptor handles.
	Preset  string         `json:"preset,omitempty"`
	Azure   *AzureConfig   `json:"azure,omitempty"`
	Vertex  *VertexConfig  `json:"vertex,omitempty"`
	Bedrock *BedrockConfig `json:"bedrock,omitempty"`
}

// AzureConfig is an Azure OpenAI resource: the api-version every call names, and which deployment serves each
// (upstream) model; a model without an entry is sent to a deployment of its own name.
type AzureConfig struct {
	APIVersion  string            `json:"api_version"`
	Deployments map[string]string `json:"deployments,omitempty"`
}

// VertexConfig is a Google Cloud project's Vertex AI endpoint. Publishers maps a model to "google" or
// "anthropic" where its name does not tell (claude-* is Anthropic's, everything else Google's).
type VertexConfig struct {
	Project    string            `json:"project"`
	Region     string            `json:"region"`
	Publishers map[string]string `json:"publishers,omitempty"`
}

// BedrockConfig is an AWS region of Bedrock; ModelIDs maps an (upstream) model to its Bedrock model id or
// inference profile (e.g. claude-sonnet-4-5 → us.anthropic.claude-sonnet-4-5-20250929-v1:0).
type BedrockConfig struct {
	Region   string            `json:"region"`
	ModelIDs map[string]string `json:"model_ids,omitempty"`
}
