package synth

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Stream
	}{
		{"openai-chat", OpenAIChat(2000, 1)},
		{"anthropic", Anthropic(2000, 1)},
		{"responses", Responses(2000, 1)},
	} {
		if tc.s.Events < 1995 || tc.s.Events > 2005 {
			t.Errorf("%s: %d events", tc.name, tc.s.Events)
		}
		for _, c := range tc.s.Calls {
			if !json.Valid([]byte(c.Args)) {
				t.Errorf("%s: invalid args %q", tc.name, c.Args)
			}
		}
		again := map[string][]byte{"openai-chat": OpenAIChatStream(2000, 1), "anthropic": AnthropicStream(2000, 1), "responses": ResponsesStream(2000, 1)}[tc.name]
		if !bytes.Equal(again, tc.s.Body) {
			t.Errorf("%s: not deterministic", tc.name)
		}
		t.Logf("%s: %d events, %d bytes, %d text bytes", tc.name, tc.s.Events, len(tc.s.Body), len(tc.s.Text))
	}
}
