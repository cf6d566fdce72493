package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProxyKeepsUpstreamReasoning: the chat proxy passes the upstream's
// reasoning deltas through (a pass-through gateway does not decide which
// models reason), though the openclaw-profile decoder drops them for a
// model not marked as reasoning.
func TestProxyKeepsUpstreamReasoning(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{`{"reasoning_content":"thinking it over"}`, `{"content":"done"}`} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	r := startGateway(t, Config{Upstream: up.URL + "/v1"})
	resp := post(t, r.url+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"reasoning_content":"thinking it over"`) || !strings.Contains(string(b), `"content":"done"`) {
		t.Fatalf("status %d, body:\n%s", resp.StatusCode, b)
	}
}
