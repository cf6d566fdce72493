package fuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// CompareFinal compares two final assistant messages (the last line of
// `ocbench replay`, or any implementation of its contract) as spec
// replay.md says: the message fields of the contract, arguments as JSON
// values, and generated values by presence. It returns one line per
// difference, nothing when the messages agree.
//
// Normalised before comparing:
//   - timestamp and responseId (outside the contract) are ignored, and
//     usage is compared on the contract's fields, reasoningTokens and
//     cacheWrite1h (input, output, cacheRead, cacheWrite, totalTokens:
//     @openclaw/ai adds cost and contextUsage);
//   - a tool-call id of the generated form (call_ + 24 hex, alone or as the
//     call part of a Responses call_id|item_id) matches any other generated
//     id with the same item part, so ids are compared by presence where
//     either side generated one;
//   - the random part of a commentary id inside a text block's
//     textSignature ({"v":1,"id":"commentary-0-<24 hex>",...}) is ignored;
//   - in a block's openclawReasoningReplay (endpoint metadata that
//     @openclaw/ai adds to encrypted Responses reasoning) the hash of the
//     server's URL is compared by presence: the oracle's port is random;
//   - numbers compare as float64, as JavaScript holds them.
func CompareFinal(ours, theirs []byte) []string {
	a, errA := decodeFinal(ours)
	b, errB := decodeFinal(theirs)
	switch {
	case errA != nil && errB != nil:
		return []string{fmt.Sprintf("neither output is a message (ours: %v; theirs: %v)", errA, errB)}
	case errA != nil:
		return []string{fmt.Sprintf("our output is not a message: %v", errA)}
	case errB != nil:
		return []string{fmt.Sprintf("their output is not a message: %v", errB)}
	}
	var diffs []string
	diffValue("", normalizeFinal(a), normalizeFinal(b), &diffs)
	return diffs
}

// LastLine returns the last non-empty line of out (the final message of
// replay output).
func LastLine(out []byte) []byte {
	out = bytes.TrimRight(out, "\r\n\t ")
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		return out[i+1:]
	}
	return out
}

func decodeFinal(b []byte) (map[string]any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok || m["role"] != "assistant" {
		return nil, fmt.Errorf("not an assistant message: %.200s", b)
	}
	return m, nil
}

// generatedID matches a generated tool-call id, alone or as the call part
// of a Responses call_id|item_id.
var generatedID = regexp.MustCompile(`^call_[0-9a-f]{24}(\|.*)?$`)
var commentaryID = regexp.MustCompile(`^((?:commentary|final-answer)-[0-9]+)-[0-9a-f]{24}$`)

func normalizeFinal(m map[string]any) map[string]any {
	delete(m, "timestamp")
	delete(m, "responseId")
	if u, ok := m["usage"].(map[string]any); ok {
		// The contract's usage fields, and reasoningTokens (the openclaw
		// profile prints it as @openclaw/ai does); @openclaw/ai adds cost
		// and contextUsage, which ocbench does not print.
		for k := range u {
			switch k {
			case "input", "output", "cacheRead", "cacheWrite", "totalTokens", "reasoningTokens", "cacheWrite1h":
			default:
				delete(u, k)
			}
		}
	}
	content, _ := m["content"].([]any)
	for _, c := range content {
		blk, ok := c.(map[string]any)
		if !ok {
			continue
		}
		// Replay-routing metadata @openclaw/ai attaches to encrypted
		// Responses reasoning names the endpoint by a hash of its URL.
		if r, ok := blk["openclawReasoningReplay"].(map[string]any); ok {
			if _, ok := r["baseUrlHash"].(string); ok {
				r["baseUrlHash"] = "<hash>"
			}
		}
		if id, ok := blk["id"].(string); ok {
			blk["id"] = generatedID.ReplaceAllString(id, "<generated>$1")
		}
		if sig, ok := blk["textSignature"].(string); ok {
			var s map[string]any
			if json.Unmarshal([]byte(sig), &s) == nil {
				if id, ok := s["id"].(string); ok {
					s["id"] = commentaryID.ReplaceAllString(id, "$1-<random>")
				}
				blk["textSignature"] = s
			}
		}
	}
	return m
}

func diffValue(path string, a, b any, diffs *[]string) {
	if len(*diffs) >= 20 {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			va, okA := x[k]
			vb, okB := y[k]
			p := path + "." + k
			switch {
			case !okA:
				*diffs = append(*diffs, fmt.Sprintf("%s: ours missing, theirs %s", p, show(vb)))
			case !okB:
				*diffs = append(*diffs, fmt.Sprintf("%s: ours %s, theirs missing", p, show(va)))
			default:
				diffValue(p, va, vb, diffs)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		if len(x) != len(y) {
			*diffs = append(*diffs, fmt.Sprintf("%s: ours %d elements %s, theirs %d elements %s", path, len(x), show(x), len(y), show(y)))
			return
		}
		for i := range x {
			diffValue(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], diffs)
		}
		return
	default:
		if a == b {
			return
		}
	}
	*diffs = append(*diffs, fmt.Sprintf("%s: ours %s, theirs %s", path, show(a), show(b)))
}

func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}
