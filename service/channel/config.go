package channel

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/cloudkey"
)

// Cloud channel types: their settings live in Channel.Config, their credentials in the (sealed) keys.
const (
	TypeAzure   = "azure"   // Azure OpenAI: api-key header, deployments, api-version
	TypeVertex  = "vertex"  // Google Vertex AI: a service-account JSON per key, project and region
	TypeBedrock = "bedrock" // AWS Bedrock (Anthropic models): "ACCESS_KEY:SECRET" per key, region
)

var (
	awsRegion      = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	gcpRegion      = regexp.MustCompile(`^[a-z]+(-[a-z]+[0-9]*)*$`)
	gcpProject     = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	azureVersion   = regexp.MustCompile(`^[0-9a-z][0-9a-z.-]{0,39}$`)
	vertexPublishr = map[string]bool{"google": true, "anthropic": true}
)

// DefaultBaseURL is where a channel of this type and config is served when the admin gave no base URL: the
// preset's URL on openai-compatible, Bedrock's regional runtime endpoint, Vertex's regional endpoint (the
// adaptors derive the same from the region); "" when the type has no default.
func (s *Service) DefaultBaseURL(typ string, cfg model.ChannelConfig) string {
	switch {
	case typ == TypeOpenAICompatible && cfg.Preset != "":
		return s.Presets[cfg.Preset]
	case typ == TypeBedrock && cfg.Bedrock != nil:
		return "https://bedrock-runtime." + cfg.Bedrock.Region + ".amazonaws.com"
	case typ == TypeVertex && cfg.Vertex != nil:
		if cfg.Vertex.Region == "global" {
			return "https://aiplatform.googleapis.com"
		}
		return "https://" + cfg.Vertex.Region + "-aiplatform.googleapis.com"
	}
	return ""
}

// checkConfig validates the type-specific settings against the channel's type and its clear keys, naming the
// field that is wrong (config.azure.api_version, keys, ...). Settings of another type are dropped.
func (s *Service) checkConfig(row *model.Channel, keys []string) error {
	cfg := row.Config.V
	out := model.ChannelConfig{}
	switch row.Type {
	case TypeOpenAICompatible:
		if cfg.Preset != "" {
			if _, ok := s.Presets[cfg.Preset]; !ok {
				return apperr.Field("config.preset", "must be one of "+strings.Join(s.presetNames(), ", "))
			}
		}
		out.Preset = cfg.Preset
	case TypeAzure:
		a := cfg.Azure
		if a == nil || !azureVersion.MatchString(a.APIVersion) {
			return apperr.Field("config.azure.api_version", "required, e.g. 2024-10-21")
		}
		if err := checkNames("config.azure.deployments", a.Deployments); err != nil {
			return err
		}
		out.Azure = a
	case TypeVertex:
		v := cfg.Vertex
		if v == nil || !gcpRegion.MatchString(v.Region) || len(v.Region) > 32 {
			return apperr.Field("config.vertex.region", "required, e.g. us-central1 or global")
		}
		for i, k := range keys {
			sa, err := cloudkey.ParseServiceAccount(k)
			if err != nil {
				return apperr.Field("keys", "key "+strconv.Itoa(i+1)+": "+err.Error())
			}
			if v.Project == "" {
				v.Project = sa.ProjectID
			}
		}
		if !gcpProject.MatchString(v.Project) {
			return apperr.Field("config.vertex.project", "required (or project_id in the service-account JSON)")
		}
		if err := checkNames("config.vertex.publishers", v.Publishers); err != nil {
			return err
		}
		for _, p := range v.Publishers {
			if !vertexPublishr[p] {
				return apperr.Field("config.vertex.publishers", `each publisher "google" or "anthropic"`)
			}
		}
		out.Vertex = v
	case TypeBedrock:
		b := cfg.Bedrock
		if b == nil || !awsRegion.MatchString(b.Region) {
			return apperr.Field("config.bedrock.region", "required, e.g. us-east-1")
		}
		for i, k := range keys {
			if _, err := cloudkey.ParseAWS(k); err != nil {
				return apperr.Field("keys", "key "+strconv.Itoa(i+1)+": "+err.Error())
			}
		}
		if err := checkNames("config.bedrock.model_ids", b.ModelIDs); err != nil {
			return err
		}
		out.Bedrock = b
	}
	row.Config.V = out
	if row.BaseURL == "" {
		row.BaseURL = s.DefaultBaseURL(row.Type, out)
	}
	if row.BaseURL == "" {
		return apperr.Field("base_url", "required")
	}
	return nil
}

// checkNames bounds a model → name map of the config.
func checkNames(field string, m map[string]string) error {
	if len(m) > 2000 {
		return apperr.Field(field, "at most 2000 entries")
	}
	for k, v := range m {
		if k == "" || v == "" || len(k) > 128 || len(v) > 256 || strings.ContainsAny(k+v, "/?#\r\n ") {
			return apperr.Field(field, "names of 1-128 characters without / ? # or spaces")
		}
	}
	return nil
}

func (s *Service) presetNames() []string {
	out := make([]string, 0, len(s.Presets))
	for n := range s.Presets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
