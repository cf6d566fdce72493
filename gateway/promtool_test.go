package gateway

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/provider/scripted"
)

// The /metrics scrape after mixed traffic (streams, non-streaming
// answers, failures, rejections) passes `promtool check metrics`: names,
// types, help texts and label conventions as Prometheus expects.
func TestMetricsPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus): skipping the metrics lint")
	}
	s := &scripted.Script{Turns: []scripted.Turn{
		{Steps: malformedScript().Turns[0].Steps},
		{Steps: []scripted.Step{scripted.Text("Partial"), scripted.InBandError("overloaded_error", "Overloaded")}},
		{HTTPError: &scripted.HTTPError{Status: 429, Body: `{"error":{"message":"slow down"}}`}},
	}}
	r := startRig(t, s, Config{})
	for i := 0; i < 6; i++ {
		resp := post(t, r.url+"/v1/chat/completions", chatBody(i%2 == 0))
		io.Copy(io.Discard, resp.Body)
		resp = post(t, r.url+"/v1/messages", messagesToolBody)
		io.Copy(io.Discard, resp.Body)
	}
	resp, _ := http.Post(r.url+"/v1/chat/completions", "text/plain", strings.NewReader("{}"))
	resp.Body.Close()
	resp, err = http.Get(r.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrape)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, want := range []string{"ocbench_gateway_stream_errors_total", "ocbench_gateway_tokens_total", `route="messages"`} {
		if !bytes.Contains(scrape, []byte(want)) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
