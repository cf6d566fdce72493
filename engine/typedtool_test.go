package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"minLength=1,description=City name"`
	Days int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
}

type weatherOut struct {
	City  string `json:"city"`
	TempC int    `json:"tempC"`
}

func TestTypedToolSchemaFromType(t *testing.T) {
	sch, err := SchemaFor[weatherIn]()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(sch, &m); err != nil {
		t.Fatal(err)
	}
	if m["type"] != "object" || m["additionalProperties"] != false || m["$schema"] != nil {
		t.Fatalf("schema %s", sch)
	}
	if req := fmt.Sprint(m["required"]); req != "[city]" {
		t.Fatalf("required %s in %s", req, sch)
	}
	props := m["properties"].(map[string]any)
	city := props["city"].(map[string]any)
	if city["type"] != "string" || city["minLength"] != 1.0 || city["description"] != "City name" {
		t.Fatalf("city %v", city)
	}
	tool := MustNewTool("weather", "Weather.", func(ctx context.Context, in weatherIn) (weatherOut, error) {
		return weatherOut{City: in.City, TempC: 21}, nil
	})
	if d := tool.Definition(); string(d.Parameters) != string(sch) || d.Name != "weather" || d.Description != "Weather." {
		t.Fatalf("definition %+v", d)
	}
	// The derived schema is in the fast validator's subset: valid calls
	// are checked on the parsed arguments, not through encoding/json.
	if tool.fast == nil {
		t.Fatalf("derived schema %s is outside the fast subset", sch)
	}
	if _, err := SchemaFor[string](); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("string input: %v", err)
	}
	if _, err := NewTool("x", "", func(context.Context, chan int) (string, error) { return "", nil }); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("chan input: %v", err)
	}
}

func TestTypedToolCalls(t *testing.T) {
	var ran atomic.Int32
	weather := MustNewTool("weather", "Weather.", func(ctx context.Context, in weatherIn) (weatherOut, error) {
		ran.Add(1)
		if in.City == "Atlantis" {
			return weatherOut{}, errors.New("no such city: Atlantis")
		}
		if in.City == "Boom" {
			panic("kaboom")
		}
		return weatherOut{City: in.City, TempC: 20 + in.Days}, nil
	})
	echo := MustNewTool("echo", "Echo.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	image := MustNewTool("shot", "Screenshot.", func(ctx context.Context, in struct{}) (ToolOutput, error) {
		return ToolOutput{Text: "the screen:", Content: []llm.Block{{Type: llm.BlockImage, Text: []byte("iVBORw0KGgo="), MimeType: []byte("image/png")}}}, nil
	})
	reg, err := NewRegistry(weather, echo, image)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if r := reg.Call(ctx, "weather", []byte(`{"city":"Lisbon","days":2}`)); r.IsError || r.Text != `{"city":"Lisbon","tempC":22}` {
		t.Fatalf("json out: %+v", r)
	}
	if r := reg.Call(ctx, "echo", []byte(`{"text":"hi"}`)); r.IsError || r.Text != "hi" {
		t.Fatalf("string out: %+v", r)
	}
	if r := reg.Call(ctx, "shot", []byte(`{}`)); r.IsError || r.Text != "the screen:" || len(r.Content) != 1 || r.Content[0].Type != llm.BlockImage {
		t.Fatalf("content out: %+v", r)
	}
	n := ran.Load()
	for _, bad := range []string{`{}`, `{"city":""}`, `{"city":"Lisbon","days":9}`, `{"city":"Lisbon","wind":true}`, `{"city":3}`, `nope`} {
		r := reg.Call(ctx, "weather", []byte(bad))
		var ae *ArgumentError
		if !r.IsError || !errors.As(r.Err, &ae) {
			t.Fatalf("%s: %+v", bad, r)
		}
	}
	if ran.Load() != n {
		t.Fatal("the handler ran on arguments that failed the schema")
	}
	if r := reg.Call(ctx, "weather", []byte(`{"city":"Atlantis"}`)); !r.IsError || r.Text != "no such city: Atlantis" {
		t.Fatalf("handler error: %+v", r)
	}
	if r := reg.Call(ctx, "weather", []byte(`{"city":"Boom"}`)); !r.IsError || !errors.Is(r.Err, ErrToolPanic) || !strings.Contains(r.Text, "kaboom") {
		t.Fatalf("panic: %+v", r)
	}
}

// A typed tool's results and errors reach the model as tool results, in
// a real run, with image content kept.
func TestTypedToolInRun(t *testing.T) {
	weather := MustNewTool("weather", "Weather.", func(ctx context.Context, in weatherIn) (weatherOut, error) {
		if in.City == "Atlantis" {
			return weatherOut{}, errors.New("no such city: Atlantis")
		}
		return weatherOut{City: in.City, TempC: 21}, nil
	})
	shot := MustNewTool("shot", "Screenshot.", func(ctx context.Context, in struct{}) (ToolOutput, error) {
		return ToolOutput{Text: "see", Content: []llm.Block{{Type: llm.BlockImage, Text: []byte("AAAA"), MimeType: []byte("image/png")}}}, nil
	})
	fp := &fakeProvider{turns: []fakeTurn{
		{msg: assistantCalls([3]string{"c1", "weather", `{"city":"Lisbon"}`}, [3]string{"c2", "weather", `{"city":"Atlantis"}`},
			[3]string{"c3", "weather", `{"town":"x"}`}, [3]string{"c4", "shot", `{}`})},
		{msg: assistantText("done")},
	}}
	res, err := Run(context.Background(), Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{weather, shot}, Model: llm.Model{ID: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	got := fp.reqs[1]
	var results []llm.Message
	for _, m := range got {
		if m.Role == llm.RoleToolResult {
			results = append(results, m)
		}
	}
	if len(results) != 4 {
		t.Fatalf("%d results", len(results))
	}
	if results[0].IsError || results[0].TextContent() != `{"city":"Lisbon","tempC":21}` {
		t.Fatalf("ok result %+v", results[0])
	}
	if !results[1].IsError || results[1].TextContent() != "no such city: Atlantis" {
		t.Fatalf("error result %q", results[1].TextContent())
	}
	if !results[2].IsError || !strings.Contains(results[2].TextContent(), "invalid arguments") {
		t.Fatalf("invalid result %q", results[2].TextContent())
	}
	if len(results[3].Content) != 2 || results[3].Content[1].Type != llm.BlockImage || string(results[3].Content[1].MimeType) != "image/png" {
		t.Fatalf("image result %+v", results[3].Content)
	}
	if len(res.ToolCalls) != 4 || !res.ToolCalls[1].IsError {
		t.Fatalf("records %+v", res.ToolCalls)
	}
}

// Under ParallelTools the calls of one message overlap: N tools that each
// wait until all N have started can only finish if they run together.
// Results are appended in the model's order whatever order they end in.
func TestParallelToolsOverlapAndOrder(t *testing.T) {
	const n = 6
	var started sync.WaitGroup
	started.Add(n)
	var inFlight, peak atomic.Int32
	slow := MustNewTool("slow", "Waits for the others.", func(ctx context.Context, in struct {
		I int `json:"i"`
	}) (string, error) {
		c := inFlight.Add(1)
		for {
			p := peak.Load()
			if c <= p || peak.CompareAndSwap(p, c) {
				break
			}
		}
		defer inFlight.Add(-1)
		started.Done()
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return "", errors.New("the other calls never started: not run concurrently")
		}
		// Finish in reverse order of the model's.
		time.Sleep(time.Duration(n-in.I) * 5 * time.Millisecond)
		return fmt.Sprintf("result %d", in.I), nil
	})
	var calls [][3]string
	for i := range n {
		calls = append(calls, [3]string{fmt.Sprintf("c%d", i), "slow", fmt.Sprintf(`{"i":%d}`, i)})
	}
	fp := &fakeProvider{turns: []fakeTurn{{msg: assistantCalls(calls...)}, {msg: assistantText("done")}}}
	var ends []string
	res, err := Run(context.Background(), Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{slow}, ParallelTools: n,
		OnEvent: func(e *Event) {
			if e.Kind == EventToolEnd {
				ends = append(ends, e.ToolCallID)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() != n {
		t.Fatalf("peak concurrency %d, want %d", peak.Load(), n)
	}
	var order []string
	for _, m := range fp.reqs[1] {
		if m.Role == llm.RoleToolResult {
			if m.IsError || m.TextContent() != "result "+strings.TrimPrefix(m.ToolCallID, "c") {
				t.Fatalf("result %s: %q", m.ToolCallID, m.TextContent())
			}
			order = append(order, m.ToolCallID)
		}
	}
	want := "[c0 c1 c2 c3 c4 c5]"
	if fmt.Sprint(order) != want || fmt.Sprint(ends) != want {
		t.Fatalf("results %v, events %v, want %s", order, ends, want)
	}
	for i, tc := range res.ToolCalls {
		if tc.ID != fmt.Sprintf("c%d", i) {
			t.Fatalf("records %+v", res.ToolCalls)
		}
	}
}

// The limit bounds the overlap, and an exclusive tool never overlaps.
func TestParallelToolsLimitAndExclusive(t *testing.T) {
	var inFlight, peak atomic.Int32
	var exclusiveSawOthers atomic.Bool
	track := func() func() {
		c := inFlight.Add(1)
		for {
			p := peak.Load()
			if c <= p || peak.CompareAndSwap(p, c) {
				break
			}
		}
		return func() { inFlight.Add(-1) }
	}
	work := MustNewTool("work", "", func(ctx context.Context, in struct{}) (string, error) {
		defer track()()
		time.Sleep(20 * time.Millisecond)
		return "w", nil
	})
	excl := MustNewTool("excl", "", func(ctx context.Context, in struct{}) (string, error) {
		defer track()()
		if inFlight.Load() != 1 {
			exclusiveSawOthers.Store(true)
		}
		time.Sleep(10 * time.Millisecond)
		if inFlight.Load() != 1 {
			exclusiveSawOthers.Store(true)
		}
		return "x", nil
	}, Exclusive())
	var calls [][3]string
	for i := range 8 {
		name := "work"
		if i == 4 {
			name = "excl"
		}
		calls = append(calls, [3]string{fmt.Sprintf("c%d", i), name, `{}`})
	}
	fp := &fakeProvider{turns: []fakeTurn{{msg: assistantCalls(calls...)}, {msg: assistantText("done")}}}
	res, err := Run(context.Background(), Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{work, excl}, ParallelTools: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak %d, want the limit 2", p)
	}
	if exclusiveSawOthers.Load() {
		t.Fatal("the exclusive call overlapped another")
	}
	if len(res.ToolCalls) != 8 || res.ToolCalls[4].Name != "excl" {
		t.Fatalf("%+v", res.ToolCalls)
	}
}

// An abort during a parallel batch cancels every call in it; the
// transcript stays paired and the run reports the abort.
func TestParallelToolsAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started atomic.Int32
	block := MustNewTool("block", "", func(ctx context.Context, in struct{}) (string, error) {
		if started.Add(1) == 3 {
			cancel()
		}
		<-ctx.Done()
		return "", ctx.Err()
	})
	fp := &fakeProvider{turns: []fakeTurn{{msg: assistantCalls([3]string{"a", "block", `{}`}, [3]string{"b", "block", `{}`}, [3]string{"c", "block", `{}`})}}}
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = Run(ctx, Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{block}, ParallelTools: 4})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end after the abort")
	}
	if !errors.Is(err, context.Canceled) || !res.Aborted {
		t.Fatalf("%v %+v", err, res)
	}
	if len(res.ToolCalls) != 3 {
		t.Fatalf("%+v", res.ToolCalls)
	}
	for _, tc := range res.ToolCalls {
		if !tc.IsError {
			t.Fatalf("%+v", tc)
		}
	}
}

// A steering interrupt cancels the batch in progress, and the calls of
// later batches are not run.
func TestParallelToolsInterrupt(t *testing.T) {
	q := &Queue{}
	var ranAfter atomic.Bool
	var started atomic.Int32
	block := MustNewTool("block", "", func(ctx context.Context, in struct{}) (string, error) {
		if started.Add(1) == 2 {
			q.Push(Interrupt, "stop that")
		}
		<-ctx.Done()
		return "", context.Cause(ctx)
	})
	after := MustNewTool("after", "", func(ctx context.Context, in struct{}) (string, error) {
		ranAfter.Store(true)
		return "", nil
	}, Exclusive())
	fp := &fakeProvider{turns: []fakeTurn{
		{msg: assistantCalls([3]string{"a", "block", `{}`}, [3]string{"b", "block", `{}`}, [3]string{"c", "after", `{}`})},
		{msg: assistantText("ok")},
	}}
	res, err := Run(context.Background(), Params{Prompt: "go", StreamFunc: fp.stream, Tools: []*Tool{block, after}, ParallelTools: 4, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	if ranAfter.Load() {
		t.Fatal("a call after the interrupt ran")
	}
	if len(res.ToolCalls) != 3 || res.Steered != 1 || !errors.Is(res.ToolCalls[2].Err, ErrInterrupted) {
		t.Fatalf("%+v steered %d", res.ToolCalls, res.Steered)
	}
	if !errors.Is(res.ToolCalls[0].Err, ErrInterrupted) {
		t.Fatalf("%+v", res.ToolCalls[0])
	}
}
