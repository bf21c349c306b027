package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
	"tollgate/service/apperr"
	"tollgate/service/channel"
)

// ListModels asks a channel's upstream for its model list (admin "fetch models"), with the first key; a type
// without a list (Vertex, Bedrock, some presets) is a 422 model_list_unsupported.
func (r *Relay) ListModels(ctx context.Context, ch *channel.Channel) ([]string, error) {
	ad, ok := r.adaptorOf(ch, "")
	if !ok || len(ch.Keys) == 0 {
		return nil, fmt.Errorf("channel %d has no adaptor or no key", ch.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := ad.ModelsRequest(ctx, ch.BaseURL, ch.Keys[0])
	if errors.Is(err, adaptor.ErrNoModelList) {
		return nil, apperr.New(http.StatusUnprocessableEntity, "model_list_unsupported")
	}
	if err != nil {
		return nil, err
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("upstream answered %d", resp.StatusCode)
	}
	if !gjson.ValidBytes(b) {
		return nil, fmt.Errorf("upstream answered invalid JSON")
	}
	out := ad.ParseModels(b)
	sort.Strings(out)
	return out, nil
}
