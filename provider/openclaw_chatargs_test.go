package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/llm"
)

// TestOpenClawToolArgBytes: @openclaw/ai's completions transport fails a
// stream whose tool call's arguments pass 256,000 UTF-8 bytes, a surrogate
// pair split across two deltas counting four bytes, not two replacements
// of three (the boundaries as OpenClaw 2026.9.6 drew them on these bodies:
// 6 + 255,988 + 3 + 3 - 2 + 2 bytes passes, one more x fails).
func TestOpenClawToolArgBytes(t *testing.T) {
	body := func(xs int) []byte {
		var b strings.Builder
		ev := func(args string) {
			js, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{
				"tool_calls": []any{map[string]any{"index": 0, "id": "c1", "type": "function", "function": map[string]any{"name": "read", "arguments": args}}}}}}})
			b.WriteString("data: " + string(js) + "\n\n")
		}
		ev(`{"p":"`)
		ev(strings.Repeat("x", xs))
		b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\ud83d\"}}]}}]}\n\n")
		b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\ude00\\\"}\"}}]}}]}\n\n")
		b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
		return []byte(b.String())
	}
	if r := ocDecode(t, WireOpenAIChat, body(255988), Options{}); r.msg.StopReason != llm.StopToolUse {
		t.Errorf("256,000 bytes: %s %q", r.msg.StopReason, r.msg.ErrorMessage)
	}
	if r := ocDecode(t, WireOpenAIChat, body(255989), Options{}); r.msg.StopReason != llm.StopError || r.msg.ErrorMessage != "Exceeded tool-call argument buffer limit" {
		t.Errorf("256,001 bytes: %s %q", r.msg.StopReason, r.msg.ErrorMessage)
	}
	// The extended profile's decoder measures nothing.
	if r := decodeBytes(WireOpenAIChat, body(255989), Options{}); r.msg.StopReason != llm.StopToolUse {
		t.Errorf("without the OpenClaw rules: %s %q", r.msg.StopReason, r.msg.ErrorMessage)
	}
}
