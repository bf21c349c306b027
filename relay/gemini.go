package relay

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"tollgate/relay/adaptor"
)

// geminiPrefix is where Gemini's routes live: /v1beta/models/{model}:{method}, and the model list.
const geminiPrefix = "/v1beta/models"

// geminiMethods are the Gemini methods the relay serves, by the name after the colon.
var geminiMethods = map[string]adaptor.Endpoint{
	"generateContent":       adaptor.GenerateContent,
	"streamGenerateContent": adaptor.GenerateContent,
	"countTokens":           adaptor.GeminiCountTokens,
	"embedContent":          adaptor.EmbedContent,
}

// registerGemini adds Gemini's native routes: calls, and the model list in Gemini's shape.
func (r *Relay) registerGemini(e *gin.Engine) {
	e.POST(geminiPrefix+"/*action", r.geminiCall)
	e.GET(geminiPrefix, r.geminiModels)
	e.GET(geminiPrefix+"/*action", r.geminiModel)
}

// geminiCall serves POST /v1beta/models/{model}:{method}: the model and stream-ness come from the path
// (alt=sse for an SSE stream; without it Google streams one JSON array).
func (r *Relay) geminiCall(c *gin.Context) {
	model, method, ok := strings.Cut(strings.TrimPrefix(c.Param("action"), "/"), ":")
	ep, known := geminiMethods[method]
	if !ok || !known || model == "" || strings.Contains(model, "/") {
		fail(c, adaptor.Gemini, newErr(http.StatusNotFound, "route_not_found"))
		return
	}
	stream := method == "streamGenerateContent"
	r.serve(c, call{ep: ep, model: model, stream: stream, sseStream: stream && c.Query("alt") == "sse"})
}

// geminiModels answers GET /v1beta/models with what the key may call, in Gemini's shape (one page).
func (r *Relay) geminiModels(c *gin.Context) {
	ids, ok := r.callableModels(c, adaptor.Gemini)
	if !ok {
		return
	}
	models := make([]gin.H, len(ids))
	for i, id := range ids {
		models[i] = geminiModelInfo(id)
	}
	c.JSON(http.StatusOK, gin.H{"models": models})
}

// geminiModel answers GET /v1beta/models/{model}.
func (r *Relay) geminiModel(c *gin.Context) {
	ids, ok := r.callableModels(c, adaptor.Gemini)
	if !ok {
		return
	}
	id := strings.TrimPrefix(c.Param("action"), "/")
	if !slices.Contains(ids, id) {
		fail(c, adaptor.Gemini, newErr(http.StatusNotFound, "model_not_found", id))
		return
	}
	c.JSON(http.StatusOK, geminiModelInfo(id))
}

func geminiModelInfo(id string) gin.H {
	return gin.H{"name": "models/" + id, "baseModelId": id, "version": "001", "displayName": id,
		"supportedGenerationMethods": []string{"generateContent", "countTokens", "embedContent"}}
}
