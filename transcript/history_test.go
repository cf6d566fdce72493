package transcript

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ocbench/ocbench/llm"
)

func user(s string) llm.Message { return llm.TextMessage(llm.RoleUser, s) }

func assistant(s string) llm.Message {
	m := llm.TextMessage(llm.RoleAssistant, s)
	m.StopReason = llm.StopStop
	return m
}

func toolCalls(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse}
	for _, id := range ids {
		m.Content = append(m.Content, llm.Block{Type: llm.BlockToolCall, ID: []byte(id), Name: []byte("read"), Arguments: []byte(`{"path":"a"}`)})
	}
	return m
}

func result(id, text string) llm.Message {
	m := llm.TextMessage(llm.RoleToolResult, text)
	m.ToolCallID, m.ToolName = id, "read"
	return m
}

func roles(msgs []llm.Message) string {
	var b []string
	for i := range msgs {
		s := msgs[i].Role.String()
		if msgs[i].Role == llm.RoleToolResult {
			s += ":" + msgs[i].ToolCallID
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

func TestTruncateToolResultText(t *testing.T) {
	if got := TruncateToolResultText("short", 100, -1); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	// Head only: no important tail; cut at the last newline in the last 20%.
	text := strings.Repeat("0123456789abcdefghi\n", 1000) // 20000 chars
	got := TruncateToolResultText(text, 5000, -1)
	if u16len(got) > 5000 || !strings.HasSuffix(got, " more characters truncated]") || strings.Contains(got, "omitted") {
		t.Fatalf("head-only: %d %q", u16len(got), got[len(got)-80:])
	}
	kept := strings.TrimSuffix(got, ContextLimitTruncationNotice(20000-strings.Index(got, "[...")))
	if !strings.HasSuffix(kept, "\n") && !strings.HasSuffix(kept, "i") {
		t.Errorf("cut not at a line end: %q", kept[len(kept)-30:])
	}
	if !strings.HasPrefix(text, kept) {
		t.Error("kept text is not a prefix")
	}
	// Every size stays within the limit, for ASCII and for text with
	// characters outside the BMP (2 UTF-16 units each).
	for _, base := range []string{"line of text\n", "é𝄞 emoji 😀 text\n", "x"} {
		long := strings.Repeat(base, 3000) + "\nError: failed with exit code 1\n"
		for _, max := range []int{1, 10, 40, 100, 2000, 2040, 4100, 9000, 16000} {
			out := TruncateToolResultText(long, max, -1)
			if n := u16len(out); n > max {
				t.Errorf("base %q max %d: length %d", base[:4], max, n)
			}
			if max >= 4100 && !strings.Contains(out, "exit code 1") {
				t.Errorf("max %d: important tail lost", max)
			}
		}
	}
	// Lengths are UTF-16 units, as OpenClaw counts them.
	if n := u16len("a😀é"); n != 4 || n != len(utf16.Encode([]rune("a😀é"))) {
		t.Errorf("u16len = %d", n)
	}
}

func TestTruncateToolResultMessageBlocks(t *testing.T) {
	m := result("c1", strings.Repeat("a", 9000))
	m.Content = append(m.Content, llm.Block{Type: llm.BlockImage, Text: []byte("AAAA"), MimeType: []byte("image/png")},
		llm.Block{Type: llm.BlockText, Text: []byte(strings.Repeat("b", 3000))})
	orig := string(m.Content[0].Text)
	out := TruncateToolResultMessage(m, 6000, -1)
	if string(m.Content[0].Text) != orig {
		t.Fatal("input modified")
	}
	if len(out.Content) != 3 || out.Content[1].Type != llm.BlockImage {
		t.Fatalf("blocks %d", len(out.Content))
	}
	// Budgets in proportion: 9000/12000 of 6000 = 4500, 3000/12000 = 1500
	// raised to minKeep + notice; so, as in OpenClaw, the total may exceed
	// maxChars.
	if a, b := len(out.Content[0].Text), len(out.Content[2].Text); a > 4500 || b > 2000+len(ContextLimitTruncationNotice(1500)) || a < 4000 || b < 2000 {
		t.Errorf("block lengths %d %d", a, b)
	}
	if same := TruncateToolResultMessage(m, 20000, -1); len(same.Content[0].Text) != 9000 {
		t.Error("message within the limit changed")
	}
	msgs := []llm.Message{user("q"), toolCalls("c1"), m, assistant("ok")}
	got, n := TruncateOversizedToolResults(msgs, 6000)
	if n != 1 || ToolResultTextLength(&got[2]) != ToolResultTextLength(&out) || ToolResultTextLength(&msgs[2]) != 12000 {
		t.Errorf("oversized: n=%d len=%d", n, ToolResultTextLength(&got[2]))
	}
}

func TestPlanToolResultReductions(t *testing.T) {
	msgs := []llm.Message{
		user("q"), toolCalls("a", "b", "c"),
		result("a", strings.Repeat("x", 30000)), // oversized
		result("b", strings.Repeat("y", 8000)),
		result("c", strings.Repeat("z", 8000)),
	}
	plan := PlanToolResultReductions(msgs, 16000, 16000, 0)
	if plan.Oversized != 1 || plan.OversizedReducible < 14000 {
		t.Errorf("oversized step %+v", plan)
	}
	after := ApplyToolResultPlan(msgs, plan)
	total := 0
	for i := range after {
		total += ToolResultTextLength(&after[i])
	}
	if total > 16000 || plan.Aggregate == 0 {
		t.Errorf("aggregate total %d plan %+v", total, plan)
	}
	// Newest first: c is reduced before b.
	if ToolResultTextLength(&after[4]) >= 8000 {
		t.Error("newest result not reduced first")
	}
	if plan.Reducible() != 46000-total {
		t.Errorf("reducible %d, removed %d", plan.Reducible(), 46000-total)
	}
	if p := PlanToolResultReductions(msgs[:3], 100000, 100000, 0); len(p.Replacements) != 0 {
		t.Error("plan for results within budget")
	}
}

func TestStripHeartbeatToken(t *testing.T) {
	for _, c := range []struct {
		in        string
		heartbeat bool
		skip      bool
		text      string
	}{
		{"", true, true, ""},
		{"HEARTBEAT_OK", false, true, ""},
		{"  HEARTBEAT_OK.  ", true, true, ""},
		{"  HEARTBEAT_OK.  ", false, false, "."}, // OpenClaw keeps the rest in message mode
		{"**HEARTBEAT_OK**", true, true, ""},
		{"<b>HEARTBEAT_OK</b>", true, true, ""},
		{"HEARTBEAT_OK All quiet.", true, true, ""},
		{"HEARTBEAT_OK All quiet.", false, false, "All quiet."},
		{"All  quiet\nHEARTBEAT_OK", false, false, "All quiet"},
		{"nothing to report", true, false, "nothing to report"},
		{"Alert: " + strings.Repeat("x", 300) + " HEARTBEAT_OK", true, false, "Alert: " + strings.Repeat("x", 300)},
		{"the HEARTBEAT_OK token in the middle of text", true, false, "the HEARTBEAT_OK token in the middle of text"},
	} {
		skip, text, _ := StripHeartbeatToken(c.in, c.heartbeat, -1)
		if skip != c.skip || text != c.text {
			t.Errorf("%q (heartbeat %v): skip %v text %q, want %v %q", c.in, c.heartbeat, skip, text, c.skip, c.text)
		}
	}
	if skip, _, _ := StripHeartbeatToken("HEARTBEAT_OK ok", true, 0); skip {
		t.Error("ackMaxChars 0 accepted a non-empty rest")
	}
}

func TestFilterHeartbeatPairs(t *testing.T) {
	task := heartbeatTaskPromptPrefix + "\n- check mail\n" + heartbeatTaskPromptAck
	withTool := toolCalls("c1")
	msgs := []llm.Message{
		user(task), assistant("HEARTBEAT_OK"), // dropped
		user(HeartbeatPollPlaceholder), withTool, // kept: the reply is not text-only
		user("hello"), assistant("HEARTBEAT_OK"), // kept: not a poll
		user(DefaultHeartbeatPrompt), assistant(""), // dropped: an empty reply is an ack
	}
	got := FilterHeartbeatPairs(msgs, -1, DefaultHeartbeatPrompt)
	if roles(got) != "user assistant user assistant" || got[0].TextContent() != HeartbeatPollPlaceholder {
		t.Errorf("got %s", roles(got))
	}
	// Without a configured prompt only the poll and task prompts count.
	if got := FilterHeartbeatPairs(msgs[6:], -1, ""); len(got) != 2 {
		t.Errorf("prompt check without a prompt: %d", len(got))
	}
	one := msgs[:1]
	if got := FilterHeartbeatPairs(one, -1, DefaultHeartbeatPrompt); len(got) != 1 {
		t.Error("single message changed")
	}
}

func TestLimitHistoryTurns(t *testing.T) {
	msgs := []llm.Message{user("q1"), assistant("r1"), user("q2"), assistant("r2"), user("q3"), result("c", "tr"), assistant("r3")}
	for _, c := range []struct {
		limit int
		first string
		n     int
	}{{0, "q1", 7}, {-1, "q1", 7}, {1, "q3", 3}, {2, "q2", 5}, {3, "q1", 7}, {10, "q1", 7}} {
		got := LimitHistoryTurns(msgs, c.limit)
		if len(got) != c.n || got[0].TextContent() != c.first {
			t.Errorf("limit %d: %d messages from %q", c.limit, len(got), got[0].TextContent())
		}
	}
}

func TestHistoryLimitFromSessionKey(t *testing.T) {
	ip := func(n int) *int { return &n }
	ch := map[string]ChannelHistoryLimits{
		"Slack": {HistoryLimit: ip(30), DMHistoryLimit: ip(10), DMs: map[string]DMHistoryLimit{"U1": {HistoryLimit: ip(3)}, "U2": {}}},
	}
	for _, c := range []struct {
		key   string
		limit int
		ok    bool
	}{
		{"agent:main:slack:channel:C1", 30, true},
		{"slack:group:G1:topic:4", 30, true},
		{"agent:main:slack:dm:U1", 3, true},
		{"agent:main:slack:direct:U1:thread:77", 3, true},
		{"agent:main:slack:dm:U2", 10, true}, // override without a limit
		{"agent:main:slack:cron:x", 0, false},
		{"agent:main:telegram:dm:1", 0, false},
		{"", 0, false},
		{"agent:main", 0, false},
	} {
		limit, ok := HistoryLimitFromSessionKey(c.key, ch)
		if limit != c.limit || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.key, limit, ok, c.limit, c.ok)
		}
	}
}

func TestRepairToolUseResultPairing(t *testing.T) {
	now := func() int64 { return 42 }
	noName := result("a", "ra")
	noName.ToolName = " "
	errored := toolCalls("e")
	errored.StopReason = llm.StopError
	msgs := []llm.Message{
		result("x", "orphan at start"),
		user("q"),
		toolCalls("a", "b", "c"),
		user("interjection"), // results after it are moved before it
		result("b", "rb"),
		noName,
		result("zz", "orphan in span"),
		result("b", "duplicate"),
		assistant("done"),
		result("a", "duplicate later"),
		errored,
		result("e", "re"),
	}
	got, rep := RepairToolUseResultPairing(msgs, PairingOptions{DropErroredAssistants: true, Now: now})
	if want := "user assistant toolResult:a toolResult:b toolResult:c user assistant"; roles(got) != want {
		t.Fatalf("got  %s\nwant %s", roles(got), want)
	}
	if got[2].ToolName != "read" || got[3].TextContent() != "rb" {
		t.Errorf("results %+v", got[2:4])
	}
	if c := got[4]; !c.IsError || c.TextContent() != MissingToolResultText || c.Timestamp != 42 || c.ToolName != "read" {
		t.Errorf("synthetic %+v", c)
	}
	// The second "b" in the span is ignored without being counted, as in
	// OpenClaw; "a" after "done" is an orphan there.
	if rep.Added != 1 || rep.DroppedDuplicates != 0 || rep.DroppedOrphans != 4 || rep.DroppedErrored != 1 || !rep.Moved {
		t.Errorf("report %+v", rep)
	}
	// Keep policy: the errored assistant stays, its result is an orphan.
	got, _ = RepairToolUseResultPairing(msgs[10:], PairingOptions{MissingResultText: "aborted", Now: now})
	if roles(got) != "assistant" {
		t.Errorf("keep errored: %s", roles(got))
	}
	got, _ = RepairToolUseResultPairing([]llm.Message{toolCalls("q")}, PairingOptions{MissingResultText: "aborted", Now: now})
	if len(got) != 2 || got[1].TextContent() != "aborted" {
		t.Errorf("missing text: %s", roles(got))
	}
	clean := []llm.Message{user("q"), toolCalls("a"), result("a", "r"), assistant("ok")}
	if got, rep := RepairToolUseResultPairing(clean, PairingOptions{}); rep.Changed() || &got[0] != &clean[0] {
		t.Error("a valid history was changed")
	}
}

func TestNormalizeAssistantReplayContent(t *testing.T) {
	blank := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte("  \n")}}}
	mixed := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: []byte(" ")}, {Type: llm.BlockText, Text: []byte("hi")}}}
	injected := assistant("notice")
	injected.Provider, injected.Model = "openclaw", "gateway-injected"
	failed := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError}
	emptyStop := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopStop}
	got := NormalizeAssistantReplayContent([]llm.Message{blank, mixed, injected, failed, emptyStop})
	if len(got) != 3 || len(got[0].Content) != 1 || got[0].TextContent() != "hi" ||
		got[1].TextContent() != FailedTurnText || got[2].TextContent() != FailedTurnText {
		t.Errorf("got %s", roles(got))
	}
	if len(mixed.Content) != 2 {
		t.Error("input modified")
	}
}

func TestRepairToolCallInputs(t *testing.T) {
	m := toolCalls("a", "b", "c", "d", "e")
	m.Content[1].Name = []byte("bad name!")
	m.Content[2].Arguments = nil
	m.Content[3].ID = nil
	m.Content[4].Name = []byte(" write ")
	only := toolCalls("z")
	only.Content[0].Name = []byte("exec")
	got, calls, dropped := RepairToolCallInputs([]llm.Message{m, only}, []string{"READ", "write"})
	if calls != 4 || dropped != 1 || len(got) != 1 || len(got[0].Content) != 2 || string(got[0].Content[1].Name) != "write" {
		t.Errorf("calls %d dropped %d got %s", calls, dropped, roles(got))
	}
	if string(m.Content[4].Name) != " write " {
		t.Error("input modified")
	}
}

func TestDropThinkingBlocks(t *testing.T) {
	m := assistant("answer")
	m.Content = append([]llm.Block{{Type: llm.BlockThinking, Text: []byte("hmm")}}, m.Content...)
	only := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking, Text: []byte("x")}}}
	got := DropThinkingBlocks([]llm.Message{m, only})
	if len(got[0].Content) != 1 || got[0].Content[0].Type != llm.BlockText || len(got[1].Content) != 1 || got[1].Content[0].Type != llm.BlockText {
		t.Errorf("got %+v", got)
	}
	if len(m.Content) != 2 {
		t.Error("input modified")
	}
}

func TestSanitizeToolCallIDs(t *testing.T) {
	msgs := []llm.Message{
		toolCalls("call_1|fc_2"), result("call_1|fc_2", "r1"),
		toolCalls("call_1|fc_2"), result("call_1|fc_2", "r2"), // the same raw id again
		toolCalls("call1fc2"), result("call1fc2", "r3"), // collides after sanitising
		result("!!", "orphan"),
	}
	got := SanitizeToolCallIDs(msgs)
	ids := []string{string(got[0].Content[0].ID), string(got[2].Content[0].ID), string(got[4].Content[0].ID)}
	if ids[0] != "call1fc2" || ids[1] == ids[0] || ids[2] == ids[0] || ids[2] == ids[1] {
		t.Errorf("ids %q", ids)
	}
	for i, id := range ids {
		if got[2*i+1].ToolCallID != id {
			t.Errorf("result %d id %q, call %q", i, got[2*i+1].ToolCallID, id)
		}
		for _, c := range id {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				t.Errorf("id %q not strict", id)
			}
		}
	}
	if got[6].ToolCallID == "" || got[6].ToolCallID == "!!" {
		t.Errorf("orphan id %q", got[6].ToolCallID)
	}
	if string(msgs[0].Content[0].ID) != "call_1|fc_2" {
		t.Error("input modified")
	}
}

func TestZeroUsageBeforeCompaction(t *testing.T) {
	a1, a2 := assistant("old"), assistant("new")
	a1.Usage.Input, a2.Usage.Input = 10, 20
	summary := user(CompactionSummaryPrefix + "S" + CompactionSummarySuffix)
	got := ZeroUsageBeforeCompaction([]llm.Message{a1, summary, a2})
	if got[0].Usage.Input != 0 || got[2].Usage.Input != 20 || a1.Usage.Input != 10 {
		t.Errorf("usage %d %d", got[0].Usage.Input, got[2].Usage.Input)
	}
}

func TestValidateTurns(t *testing.T) {
	dangling := toolCalls("a", "b")
	dangling.Content = append([]llm.Block{{Type: llm.BlockText, Text: []byte("let me look")}}, dangling.Content...)
	onlyDangling := toolCalls("z")
	msgs := []llm.Message{user("q1"), user("q2"), dangling, result("a", "ra"), onlyDangling, assistant("end")}
	got := ValidateAnthropicTurns(msgs)
	if roles(got) != "user assistant toolResult:a assistant assistant" {
		t.Fatalf("anthropic: %s", roles(got))
	}
	if len(got[0].Content) != 2 || len(got[1].Content) != 2 || got[3].TextContent() != "[tool calls omitted]" {
		t.Errorf("anthropic content: %+v", got)
	}
	gem := ValidateGeminiTurns(got)
	if roles(gem) != "user assistant toolResult:a assistant" || len(gem[3].Content) != 2 || gem[3].StopReason != llm.StopStop {
		t.Errorf("gemini: %s", roles(gem))
	}
}

// pairedInvariant checks what the provider APIs require of a prepared
// history: each assistant's tool calls are followed directly by exactly
// their results, and no result stands elsewhere.
func pairedInvariant(t *testing.T, msgs []llm.Message) {
	t.Helper()
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role == llm.RoleToolResult {
			t.Fatalf("message %d: stray tool result %q", i, m.ToolCallID)
		}
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, c := range toolCallsOf(m, nil) {
			i++
			if i >= len(msgs) || msgs[i].Role != llm.RoleToolResult || msgs[i].ToolCallID != string(c.id) {
				t.Fatalf("call %q not followed by its result", c.id)
			}
		}
	}
}

func TestPrepareSessions(t *testing.T) {
	for _, f := range []struct {
		path string
		api  llm.API
	}{{qwenFile, "openai-completions"}, {piV1File, "anthropic-messages"}, {piV1File, "openai-responses"}, {piV1File, ""}} {
		sc, err := LoadContext(f.path)
		if err != nil {
			t.Fatal(err)
		}
		before := messagesJSON(sc.Messages)
		out, rep := Prepare(sc.Messages, PrepareOptions{Policy: PolicyForAPI(f.api), Now: func() int64 { return 1 }})
		if messagesJSON(sc.Messages) != before {
			t.Fatal("Prepare modified its input")
		}
		pairedInvariant(t, out)
		for i := range out {
			m := &out[i]
			if m.Role == llm.RoleAssistant && (m.Provider == "openclaw" || m.StopReason == llm.StopError || m.StopReason == llm.StopAborted) {
				t.Errorf("%s: assistant %d (%s/%s %v) survived", f.path, i, m.Provider, m.Model, m.StopReason)
			}
			if ToolResultTextLength(m) > DefaultMaxLiveToolResultChars {
				t.Errorf("tool result %d over the live cap", i)
			}
		}
		if rep.In != len(sc.Messages) || rep.Out != len(out) {
			t.Errorf("report %+v", rep)
		}
		t.Logf("%s %s: %d -> %d messages, %+v", f.path[len("../testdata/sessions/"):], f.api, rep.In, rep.Out, rep)
	}
	// The history limit and the live cap apply.
	msgs := []llm.Message{user("q1"), assistant("a1"), user("q2"), toolCalls("c"), result("c", strings.Repeat("x", 20000)), assistant("a2")}
	out, rep := Prepare(msgs, PrepareOptions{HistoryLimit: 1, ContextWindowTokens: 8000})
	if len(out) != 4 || rep.LimitDropped != 2 || rep.TruncatedToolResult != 1 || ToolResultTextLength(&out[2]) > 9600 {
		t.Errorf("limit/cap: %s %+v", roles(out), rep)
	}
}

func TestPairingDuplicateAcrossTurns(t *testing.T) {
	// A later assistant reusing a call id: its result is a duplicate of one
	// already placed and is dropped, and so is the synthetic result made
	// for it (OpenClaw counts both), leaving that call unanswered.
	msgs := []llm.Message{toolCalls("a"), result("a", "r1"), toolCalls("a"), result("a", "r2")}
	got, rep := RepairToolUseResultPairing(msgs, PairingOptions{Now: func() int64 { return 1 }})
	if rep.DroppedDuplicates != 2 || rep.Added != 1 || roles(got) != "assistant toolResult:a assistant" {
		t.Errorf("%s %+v", roles(got), rep)
	}
}
