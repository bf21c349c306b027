package azure

import (
	"context"
	"net/http"
	"testing"

	"tollgate/model"
	"tollgate/relay/adaptor"
)

// Every OpenAI endpoint lands under the deployment, whatever its suffix: the layout is derived from the path the
// OpenAI adaptor builds, so endpoints added there work on Azure unchanged.
func TestNewRequest_EveryOpenAIEndpointUnderTheDeployment(t *testing.T) {
	cfg := model.ChannelConfig{Azure: &model.AzureConfig{APIVersion: "2025-04-01-preview", Deployments: map[string]string{"gpt-4o": "dep 4o"}}}
	ad := Adaptor{}.Configure(cfg, "gpt-4o")
	want := map[adaptor.Endpoint]string{
		adaptor.ChatCompletions: "https://r.openai.azure.com/openai/deployments/dep%204o/chat/completions?api-version=2025-04-01-preview",
		adaptor.Completions:     "https://r.openai.azure.com/openai/deployments/dep%204o/completions?api-version=2025-04-01-preview",
		adaptor.Embeddings:      "https://r.openai.azure.com/openai/deployments/dep%204o/embeddings?api-version=2025-04-01-preview",
		adaptor.Responses:       "https://r.openai.azure.com/openai/v1/responses",
	}
	for ep, u := range want {
		req, err := ad.NewRequest(context.Background(), &adaptor.Call{Endpoint: ep, Body: []byte(`{"model":"gpt-4o"}`), Header: http.Header{}, BaseURL: "https://r.openai.azure.com/", Key: "az"})
		if err != nil {
			t.Fatal(err)
		}
		if req.URL.String() != u || req.Host != "r.openai.azure.com" || req.Header.Get("api-key") != "az" || req.Header.Get("Authorization") != "" {
			t.Errorf("%v: %s host %s headers %v", ep, req.URL, req.Host, req.Header)
		}
	}
	// A model without a deployment entry goes to a deployment of its own name.
	req, _ := Adaptor{}.Configure(cfg, "gpt-4o-mini").NewRequest(context.Background(), &adaptor.Call{Endpoint: adaptor.ChatCompletions,
		Body: []byte(`{}`), Header: http.Header{}, BaseURL: "https://r.openai.azure.com", Key: "az"})
	if req.URL.Path != "/openai/deployments/gpt-4o-mini/chat/completions" {
		t.Errorf("unmapped model: %s", req.URL)
	}
	mr, _ := ad.ModelsRequest(context.Background(), "https://r.openai.azure.com/openai", "az")
	if mr.URL.String() != "https://r.openai.azure.com/openai/models?api-version=2025-04-01-preview" || mr.Header.Get("api-key") != "az" {
		t.Errorf("models request %s", mr.URL)
	}
}
