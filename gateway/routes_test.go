package gateway

import (
	"net/http"
	"testing"
)

// The streaming routes taken before the mux answer as the mux routes
// them: a POST to the plain path is served, other methods (the catch-all 404), escaped or
// unclean spellings of the path and an unconfigured /v1/runs get what the
// mux gives them.
func TestHotRoutesAgreeWithMux(t *testing.T) {
	r := startRig(t, malformedScript(), Config{})
	body := chatBody(true)
	for _, tc := range []struct {
		req    string
		status int
	}{
		{rawRequest("/v1/chat/completions", body), http.StatusOK},
		{rawRequest("/v1/chat%2Fcompletions", body), http.StatusNotFound},
		{rawRequest("/v1/chat/completions/", body), http.StatusNotFound},
		{rawRequest("/v1//chat/completions", body), http.StatusTemporaryRedirect},
		{rawRequest("/v1/runs", body), http.StatusNotFound},
		{"GET /v1/chat/completions HTTP/1.1\r\nHost: a\r\n\r\n", http.StatusNotFound},
		{"PUT /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", http.StatusNotFound},
	} {
		resp := rawExchange(t, r.url, tc.req, 1)[0]
		if resp.StatusCode != tc.status {
			t.Errorf("%q: status %d, want %d", tc.req[:min(len(tc.req), 40)], resp.StatusCode, tc.status)
		}
	}
}
