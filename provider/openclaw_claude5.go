package provider

import (
	"strings"
)

// claude5Refusals reports whether the model id names a Claude model of
// the fifth generation that @openclaw/ai streams under Anthropic's
// streaming refusal contract (usesClaudeStreamingRefusalContract): Fable 5,
// Mythos 5, Opus 5 (the aliases "opus" and "opus-5" included) or Sonnet 5,
// by direct, cloud or prefixed id ("anthropic/claude-fable-5",
// "us.anthropic.claude-opus-5-5-v1").
func claude5Refusals(model string) bool {
	id := claudeIdentity(model)
	if id == "opus" || id == "opus-5" || id == "opus-5-5" {
		return true
	}
	for _, family := range [...]string{"claude-fable-5", "claude-mythos-5", "claude-opus-5", "claude-sonnet-5"} {
		if claudeFamilyAt(id, family) {
			return true
		}
	}
	return false
}

// claudeIdentity is resolveClaudeModelIdentity: the id lower-cased and
// trimmed, without an "anthropic/" prefix, runs of '.', '_' and spaces as
// one '-', and then from its last "claude-" part that follows the start, a
// '-' or a '/' (to its end, when no '/' follows).
func claudeIdentity(model string) string {
	n := strings.ToLower(strings.TrimSpace(model))
	n = strings.TrimPrefix(n, "anthropic/")
	var b strings.Builder
	sep := false
	for _, r := range n {
		if r == '.' || r == '_' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' {
			sep = true
			continue
		}
		if sep {
			b.WriteByte('-')
			sep = false
		}
		b.WriteRune(r)
	}
	if sep {
		b.WriteByte('-')
	}
	n = b.String()
	// /(?:^|[-/])(claude-[^/]+)$/: the first "claude-" at the start or
	// after '-' or '/' whose rest holds no '/'.
	for i := 0; i+len("claude-") <= len(n); i++ {
		if (i == 0 || n[i-1] == '-' || n[i-1] == '/') && strings.HasPrefix(n[i:], "claude-") && !strings.Contains(n[i:], "/") {
			return n[i:]
		}
	}
	return n
}

// claudeFamilyAt is /(?:^|-)FAMILY(?=$|[^a-z0-9])/ on id.
func claudeFamilyAt(id, family string) bool {
	for i := strings.Index(id, family); i >= 0; {
		end := i + len(family)
		if (i == 0 || id[i-1] == '-') && (end == len(id) || !(id[end] >= 'a' && id[end] <= 'z' || id[end] >= '0' && id[end] <= '9')) {
			return true
		}
		j := strings.Index(id[i+1:], family)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}
