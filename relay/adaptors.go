package relay

import (
	"tollgate/relay/adaptor"
	"tollgate/service/channel"
)

// adaptorOf is the adaptor that serves publicModel on ch: the type's, configured with the channel's settings
// and the upstream model when the family depends on them (adaptor.Configurable: Azure, Vertex, Bedrock, an
// OpenAI-compatible preset). publicModel "" is the channel as a whole (model list).
func (r *Relay) adaptorOf(ch *channel.Channel, publicModel string) (adaptor.Adaptor, bool) {
	ad, ok := r.Adaptors[ch.Type]
	if !ok {
		return nil, false
	}
	if c, ok := ad.(adaptor.Configurable); ok {
		upstream := ""
		if publicModel != "" {
			upstream = ch.UpstreamModel(publicModel)
		}
		ad = c.Configure(ch.Config.V, upstream)
	}
	return ad, true
}
