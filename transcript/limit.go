package transcript

import (
	"regexp"
	"strings"

	"github.com/ocbench/ocbench/llm"
)

// LimitHistoryTurns keeps the suffix of msgs that starts at the limit-th
// user message from the end (OpenClaw's limitHistoryTurns); a limit <= 0,
// or fewer user messages than limit, leaves msgs unchanged. The result
// shares msgs' backing array.
func LimitHistoryTurns(msgs []llm.Message, limit int) []llm.Message {
	if limit <= 0 || len(msgs) == 0 {
		return msgs
	}
	users := 0
	lastUser := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			users++
			if users > limit {
				return msgs[lastUser:]
			}
			lastUser = i
		}
	}
	return msgs
}

// ChannelHistoryLimits is the part of OpenClaw's channels.<id> config that
// limits history; the JSON tags match the config file.
type ChannelHistoryLimits struct {
	HistoryLimit   *int                      `json:"historyLimit"`
	DMHistoryLimit *int                      `json:"dmHistoryLimit"`
	DMs            map[string]DMHistoryLimit `json:"dms"`
}

// DMHistoryLimit is a per-peer override (channels.<id>.dms.<peer>).
type DMHistoryLimit struct {
	HistoryLimit *int `json:"historyLimit"`
}

var threadSuffixRE = regexp.MustCompile(`(?i)^(.*)(?::(?:thread|topic):\d+)$`)

func normalizeProviderID(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// HistoryLimitFromSessionKey resolves the history limit of a session key
// (OpenClaw's getHistoryLimitFromSessionKey): strip "agent:<id>:", read
// "<channel>:<kind>:<peer...>", find channels[<channel>] (ids compared
// normalised); kind dm/direct -> the peer's dms override (a :thread:N or
// :topic:N suffix stripped), else dmHistoryLimit; kind group/channel ->
// historyLimit; anything else -> none. ok is false when no limit applies.
func HistoryLimitFromSessionKey(sessionKey string, channels map[string]ChannelHistoryLimits) (limit int, ok bool) {
	if sessionKey == "" || channels == nil {
		return 0, false
	}
	var parts []string
	for _, p := range strings.Split(sessionKey, ":") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) >= 3 && parts[0] == "agent" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return 0, false
	}
	provider := normalizeProviderID(parts[0])
	if provider == "" {
		return 0, false
	}
	kind := ""
	if len(parts) > 1 {
		kind = strings.ToLower(parts[1])
	}
	userID := ""
	if len(parts) > 2 {
		userID = strings.Join(parts[2:], ":")
		if m := threadSuffixRE.FindStringSubmatch(userID); m != nil {
			userID = m[1]
		}
	}
	// Map iteration order is random; pick the lexically first matching key
	// so that the result is deterministic when two keys normalise alike.
	var cfg *ChannelHistoryLimits
	best := ""
	for id, c := range channels {
		if normalizeProviderID(id) == provider && (cfg == nil || id < best) {
			c := c
			cfg, best = &c, id
		}
	}
	if cfg == nil {
		return 0, false
	}
	deref := func(p *int) (int, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	switch kind {
	case "dm", "direct":
		if userID != "" {
			if d, ok := cfg.DMs[userID]; ok && d.HistoryLimit != nil {
				return *d.HistoryLimit, true
			}
		}
		return deref(cfg.DMHistoryLimit)
	case "channel", "group":
		return deref(cfg.HistoryLimit)
	}
	return 0, false
}
