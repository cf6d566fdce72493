package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/provider/scripted"
)

func do(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// Cross-site requests from a browser page cannot reach the gateway: no
// text/plain bodies, no foreign Origin unless --cors allows it, no
// rebinding Host, and the gateway's own key when one is set.
func TestGuard(t *testing.T) {
	r := startRig(t, malformedScript(), Config{CheckHost: true, CORSOrigins: []string{"http://app.example"}})
	chat := r.url + "/v1/chat/completions"
	json := map[string]string{"Content-Type": "application/json"}
	if resp, b := do(t, "POST", chat, chatBody(false), map[string]string{"Content-Type": "text/plain"}); resp.StatusCode != 415 {
		t.Errorf("text/plain: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", chat, chatBody(false), map[string]string{"Content-Type": "application/json; charset=utf-8", "Origin": "http://evil.example"}); resp.StatusCode != 403 {
		t.Errorf("foreign origin: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", chat, chatBody(false), map[string]string{"Content-Type": "application/json", "Host": "evil.example:8080"}); resp.StatusCode != 421 {
		t.Errorf("rebinding host: %d %s", resp.StatusCode, b)
	}
	resp, _ := do(t, "OPTIONS", chat, "", map[string]string{"Origin": "http://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, authorization"})
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, b := do(t, "POST", chat, chatBody(false), map[string]string{"Content-Type": "application/json", "Origin": "http://app.example"})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("allowed origin: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", chat, chatBody(false), json); resp.StatusCode != 200 {
		t.Errorf("plain JSON client: %d %s", resp.StatusCode, b)
	}
}

func TestGatewayAuthKey(t *testing.T) {
	seen := make(chan string, 4)
	s := &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{scripted.Text("ok")}}}}
	_, up, err := scripted.Start(scripted.Options{Script: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	// The transport records the credentials the upstream receives.
	r := startGateway(t, Config{Upstream: up.URL, AuthKey: "gw-key-0123456789", UpstreamKey: "sk-upstream-abcdef",
		HTTPClient: &http.Client{Transport: recordAuth{seen, http.DefaultTransport}}})
	chat := r.url + "/v1/chat/completions"
	for _, h := range []map[string]string{
		{"Content-Type": "application/json"},
		{"Content-Type": "application/json", "Authorization": "Bearer wrong-key-0000000"},
		{"Content-Type": "application/json", "Authorization": "Bearer gw-key-012345678"},
	} {
		if resp, b := do(t, "POST", chat, chatBody(false), h); resp.StatusCode != 401 || !strings.Contains(b, "authentication_error") {
			t.Errorf("%v: %d %s", h, resp.StatusCode, b)
		}
	}
	for _, h := range []map[string]string{
		{"Content-Type": "application/json", "Authorization": "Bearer gw-key-0123456789"},
		{"Content-Type": "application/json", "X-Api-Key": "gw-key-0123456789"},
	} {
		if resp, b := do(t, "POST", chat, chatBody(false), h); resp.StatusCode != 200 {
			t.Errorf("%v: %d %s", h, resp.StatusCode, b)
		}
		if got := <-seen; got != "Bearer sk-upstream-abcdef" {
			t.Errorf("upstream got credentials %q, want the upstream key only", got)
		}
	}
	if resp, _ := do(t, "GET", r.url+"/healthz", "", nil); resp.StatusCode != 200 {
		t.Errorf("/healthz behind the key: %d", resp.StatusCode)
	}
}

type recordAuth struct {
	seen chan string
	rt   http.RoundTripper
}

func (ra recordAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	ra.seen <- r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
	return ra.rt.RoundTrip(r)
}

// An upstream that echoes the API key in an error never gets it to the
// client or the log: not in a relayed error status, not in an in-band
// error, streamed or not.
func TestEchoedKeyIsRedacted(t *testing.T) {
	const key = "sk-live-9f8e7d6c5b4a"
	var mu sync.Mutex
	var logged strings.Builder
	logf := func(f string, a ...any) { mu.Lock(); fmt.Fprintf(&logged, f+"\n", a...); mu.Unlock() }
	cases := []scripted.Turn{
		{HTTPError: &scripted.HTTPError{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + key + `","type":"invalid_request_error"}}`}},
		{Steps: []scripted.Step{scripted.Text("hi"), scripted.InBandError("invalid_request_error", "bad key "+key)}},
	}
	for i, turn := range cases {
		for _, stream := range []bool{false, true} {
			r := startRig(t, &scripted.Script{Turns: []scripted.Turn{turn}}, Config{Logf: logf})
			resp, b := do(t, "POST", r.url+"/v1/chat/completions", chatBody(stream), map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + key})
			if strings.Contains(b, key) || !strings.Contains(b, redact.Marker) {
				t.Errorf("case %d stream %v: %d %s", i, stream, resp.StatusCode, b)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logged.String(), key) {
		t.Errorf("key in the log:\n%s", logged.String())
	}
}
