package gateway

import (
	"bytes"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

// wrap puts OpenClaw's decorator chain around the upstream stream: the
// client's declared tools are the live allowlist (name trimming, the
// unknown-tool guard, text promotion), arguments are repaired with the
// extended profile, and the idle timeout polices the upstream. perConn:
// the chain serves a connection's requests one after the other, under
// the connection's request context (reqContext), so the idle timeout
// keeps the context it derives from it for as long as it is not
// cancelled, instead of deriving two per stream.
func (s *Server) wrap(base llm.StreamFunc, w wire, pr proxyRequest, perConn bool) llm.StreamFunc {
	var tools *streamwrap.Allowlist
	if len(pr.tools) > 0 {
		tools = streamwrap.NewAllowlist(pr.tools...)
	}
	return streamwrap.Chain(base, streamwrap.Options{
		Profile:          repair.ProfileExtended,
		LiveTools:        tools,
		IdleTimeout:      s.cfg.IdleTimeout,
		IdleReuseContext: perConn,
		OnIdleTimeout: func(error) {
			s.m.idleTimeouts.WithLabelValues(routeName(w)).Inc()
		},
	})
}

// countRepairs adds the chain's work on one finished message to the
// metrics: tool calls whose arguments differ from what the upstream sent,
// and turns refused because a tool call was unusable.
func (s *Server) countRepairs(route string, m *llm.Message) {
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type != llm.BlockToolCall || len(b.Arguments) == 0 {
			continue
		}
		if !bytes.Equal(bytes.TrimSpace(b.RawArgs), b.Arguments) && len(bytes.TrimSpace(b.RawArgs)) > 0 {
			s.m.repairs.WithLabelValues(route, "arguments").Inc()
		}
	}
	if m.StopReason == llm.StopError || m.StopReason == llm.StopLength {
		for i := range m.Content {
			if m.Content[i].Type == llm.BlockToolCall && len(m.Content[i].Arguments) == 0 {
				s.m.repairs.WithLabelValues(route, "refused").Inc()
				break
			}
		}
	}
}

// addTokens adds one answer's usage to the token counters. Zero kinds
// are not touched, so that usage the upstream did not send stays absent.
func (s *Server) addTokens(route, model string, u *llm.Usage) {
	if *u == (llm.Usage{}) {
		return
	}
	s.m.addTokens(route, model, [...]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite})
}
