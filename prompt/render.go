package prompt

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is one rendered section: its name and byte range in the output.
type Span struct {
	Name       string
	Start, End int
}

// lineWriter implements OpenClaw's joining rule: elements are appended with
// a "\n" between them, and empty elements are dropped.
type lineWriter struct {
	b      []byte
	n      int     // elements written
	spans  *[]Span // nil: do not record
	secIdx int
}

// add appends one element.
func (w *lineWriter) add(s string) {
	if s == "" {
		return
	}
	w.sep()
	w.b = append(w.b, s...)
}

// sep starts a new non-empty element.
func (w *lineWriter) sep() {
	if w.n > 0 {
		w.b = append(w.b, '\n')
	}
	w.n++
}

// begin opens a section for the report; end closes it.
func (w *lineWriter) begin(name string) {
	if w.spans == nil {
		return
	}
	start := len(w.b)
	if w.n > 0 {
		start++ // the separator belongs to no section
	}
	*w.spans = append(*w.spans, Span{Name: name, Start: start, End: -1})
	w.secIdx = len(*w.spans) - 1
}

// beginFile opens the section of one context file.
func (w *lineWriter) beginFile(p string) {
	if w.spans != nil {
		w.begin("file:" + path.Base(p))
	}
}

func (w *lineWriter) end() {
	if w.spans == nil || w.secIdx < 0 {
		return
	}
	sp := &(*w.spans)[w.secIdx]
	sp.End = len(w.b)
	if sp.End < sp.Start {
		// Nothing was written: drop the empty section.
		*w.spans = (*w.spans)[:w.secIdx]
	}
	w.secIdx = -1
}

// toolSet is the deduplicated tool list of one render.
type toolSet struct {
	canon map[string]string // lower -> first spelling
	order []string          // lower names, first-seen order
}

func newToolSet(names []string) toolSet {
	ts := toolSet{canon: make(map[string]string, len(names))}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		l := strings.ToLower(n)
		if _, ok := ts.canon[l]; !ok {
			ts.canon[l] = n
			ts.order = append(ts.order, l)
		}
	}
	return ts
}

func (ts toolSet) has(l string) bool { _, ok := ts.canon[l]; return ok }

func (ts toolSet) name(l string) string {
	if n, ok := ts.canon[l]; ok {
		return n
	}
	return l
}

func hasTool(names []string, l string) bool {
	for _, n := range names {
		if strings.EqualFold(strings.TrimSpace(n), l) {
			return true
		}
	}
	return false
}

// renderStable appends the stable part (above the cache boundary) as one
// joined text.
func renderStable(w *lineWriter, p *Params) {
	full := p.Mode == ModeFull
	ts := newToolSet(p.ToolNames)

	w.begin("identity")
	w.add(IdentityLine)
	w.end()

	w.begin("tooling")
	w.add("## Tooling\nTool availability (filtered by policy):\nTool names are case-sensitive. Call tools exactly as listed.")
	if len(ts.order) == 0 {
		w.add(fallbackToolLines)
	} else {
		for _, l := range toolOrder {
			if ts.has(l) {
				appendToolLine(w, ts.name(l), l, p.ToolSummaries)
			}
		}
		var extra []string
		for _, l := range ts.order {
			if !slices.Contains(toolOrder[:], l) {
				extra = append(extra, l)
			}
		}
		slices.Sort(extra)
		for _, l := range extra {
			appendToolLine(w, ts.name(l), l, p.ToolSummaries)
		}
	}
	w.add(toolsMdDisclaimer)
	w.add("For long waits, avoid rapid poll loops: use " + ts.name("exec") + " with enough yieldMs or " + ts.name("process") + "(action=poll, timeout=<ms>).")
	w.add(subagentPushLine)
	w.add(forkContextLine)
	var seen []string
	for _, g := range p.NativeCommandGuidance {
		g = strings.TrimSpace(g)
		if g == "" || slices.Contains(seen, g) {
			continue
		}
		seen = append(seen, g)
		w.add(g)
	}
	w.add(noPollSubagentLine)
	w.end()

	if s := normalizeBlock(p.Provider.InteractionStyle); s != "" {
		w.begin("interaction_style")
		w.add(s)
		w.end()
	}

	w.begin("tool_call_style")
	if s := normalizeBlock(p.Provider.ToolCallStyle); s != "" {
		w.add(s)
	} else {
		w.add(toolCallStyleHead)
		if p.ApprovalUI == ApprovalNative {
			w.add(approvalNativeLine)
		} else {
			w.add(approvalCommandLine)
		}
		w.add(toolCallStyleTail)
	}
	w.end()

	w.begin("execution_bias")
	if s := normalizeBlock(p.Provider.ExecutionBias); s != "" {
		w.add(s)
	} else if full {
		w.add(executionBias)
	}
	w.end()

	if s := normalizeBlock(p.Provider.StablePrefix); s != "" {
		w.begin("provider_stable_prefix")
		w.add(s)
		w.end()
	}

	w.begin("safety")
	w.add(safetySection)
	w.end()
	w.begin("cli")
	w.add(cliSection)
	w.end()

	if skills := strings.TrimSpace(p.SkillsPrompt); skills != "" {
		w.begin("skills")
		read := ts.name("read")
		w.add(skillsHead)
		w.add("- If exactly one skill clearly applies: read its SKILL.md at <location> with `" + read + "`, then follow it." + skillsRuleLocate)
		w.add("- If multiple could apply: choose the most specific one, read its SKILL.md at <location> with `" + read + "`, then follow it." + skillsRuleLocate)
		w.add(skillsTail)
		w.add(skills)
		w.end()
	}

	if full && p.MemoryEnabled && (ts.has("memory_search") || ts.has("memory_get")) {
		w.begin("memory")
		w.add(memoryRecall)
		if p.MemoryCitations {
			w.add(memoryCitationsOn)
		} else {
			w.add(memoryCitationsOff)
		}
		w.end()
	}

	if full && ts.has("gateway") {
		w.begin("self_update")
		w.add(selfUpdate)
		w.end()
	}

	if full && len(p.ModelAliasLines) > 0 {
		w.begin("model_aliases")
		w.add(modelAliasesHead)
		for _, l := range p.ModelAliasLines {
			w.add(l)
		}
		w.end()
	}

	tz := strings.TrimSpace(p.UserTimezone)
	if tz != "" {
		w.begin("session_status_hint")
		w.add(sessionStatusHint)
		w.end()
	}

	w.begin("workspace")
	ws := sanitizeLiteral(p.WorkspaceDir)
	container := sanitizeLiteral(strings.TrimSpace(p.Sandbox.ContainerWorkspaceDir))
	w.add("## Workspace")
	if p.Sandbox.Enabled && container != "" {
		w.add("Your working directory is: " + container)
		w.add("For read/write/edit/apply_patch, file paths resolve against host workspace: " + ws + ". For bash/exec commands, use sandbox container paths under " + container + " (or relative paths from that workdir), not host paths. Prefer relative paths so both sandboxed exec and file tools work consistently.")
	} else {
		w.add("Your working directory is: " + ws)
		w.add(workspaceGuidance)
	}
	for _, n := range p.WorkspaceNotes {
		w.add(strings.TrimSpace(n))
	}
	w.end()

	if full {
		w.begin("documentation")
		docs := strings.TrimSpace(p.DocsPath)
		w.add("## Documentation")
		if docs != "" {
			w.add("OpenClaw docs: " + docs)
		} else {
			w.add("OpenClaw docs: https://docs.openclaw.ai")
		}
		w.add("Mirror: https://docs.openclaw.ai")
		if src := strings.TrimSpace(p.LocalSource); src != "" {
			w.add("Local source: " + src)
		}
		w.add(docsTail)
		if docs != "" {
			w.add("For OpenClaw behavior, commands, config, or architecture: consult local docs first.")
		} else {
			w.add("For OpenClaw behavior, commands, config, or architecture: consult the docs mirror first.")
		}
		w.add(docsGuidance)
		w.end()
	}

	if p.Sandbox.Enabled {
		w.begin("sandbox")
		renderSandbox(w, &p.Sandbox)
		w.end()
	}

	if full {
		if ids := ownerIDs(p); ids != "" {
			w.begin("authorized_senders")
			w.add("## Authorized Senders")
			w.add("Authorized senders: " + ids + ". These senders are allowlisted; do not assume they are the owner.")
			w.end()
		}
	}

	if tz != "" {
		w.begin("time")
		w.add("## Current Date & Time")
		w.add("Time zone: " + tz)
		w.end()
	}

	switch p.BootstrapMode {
	case BootstrapFull:
		w.begin("bootstrap_pending")
		w.add(bootstrapPendingFull)
		w.end()
	case BootstrapLimited:
		w.begin("bootstrap_pending")
		w.add(bootstrapPendingLimited)
		w.end()
	}
	if n := strings.TrimSpace(p.BootstrapTruncationNotice); n != "" {
		w.begin("bootstrap_notice")
		w.add("## Bootstrap Context Notice")
		w.add(n)
		w.end()
	}

	w.begin("workspace_files")
	w.add(workspaceFiles)
	w.end()

	if full {
		w.begin("output_directives")
		w.add(outputDirectives)
		w.end()
	}
	if p.ReasoningTagHint {
		w.begin("reasoning_format")
		w.add(reasoningFormat)
		w.end()
	}

	if stable := stableFiles(p.ContextFiles); len(stable) > 0 {
		w.begin("project_context")
		w.add(projectContextHead)
		for _, f := range stable {
			if strings.EqualFold(path.Base(f.Path), "soul.md") {
				w.add(soulPersonaLine)
				break
			}
		}
		w.end()
		for _, f := range stable {
			w.beginFile(f.Path)
			w.add("## " + f.Path)
			appendFileContent(w, &f)
			w.end()
		}
	}

	if full && p.SourceReplyDeliveryMode != "message_tool_only" && p.SilentReplyPromptMode != "none" {
		w.begin("silent_replies")
		w.add(silentReplies)
		w.end()
	}
}

func appendToolLine(w *lineWriter, name, lower string, external map[string]string) {
	summary, ok := coreToolSummaries[lower]
	if !ok {
		for k, v := range external {
			if strings.EqualFold(strings.TrimSpace(k), lower) && strings.TrimSpace(v) != "" {
				summary = strings.TrimSpace(v)
				break
			}
		}
	}
	w.sep()
	w.b = append(w.b, "- "...)
	w.b = append(w.b, name...)
	if summary != "" {
		w.b = append(w.b, ": "...)
		w.b = append(w.b, summary...)
	}
}

func renderSandbox(w *lineWriter, s *SandboxInfo) {
	w.add(sandboxIntro)
	if d := strings.TrimSpace(s.ContainerWorkspaceDir); d != "" {
		w.add("Sandbox container workdir: " + sanitizeLiteral(d))
	}
	if d := strings.TrimSpace(s.WorkspaceDir); d != "" {
		w.add("Sandbox host mount source (file tools bridge only; not valid inside sandbox exec): " + sanitizeLiteral(d))
	}
	if a := strings.TrimSpace(s.WorkspaceAccess); a != "" {
		w.add("Agent workspace access: " + a)
	}
	e := s.Elevated
	if e == nil || !e.Allowed {
		return
	}
	levels := "on|off|ask"
	if e.FullAccessAvailable {
		levels = "on|off|ask|full"
	}
	w.add("Elevated exec is available for this session.")
	w.add("User can toggle with /elevated " + levels + ".")
	w.add("You may also send /elevated " + levels + " when needed.")
	level := e.DefaultLevel
	if level == "" {
		level = "ask"
	}
	if e.FullAccessAvailable {
		w.add("Current elevated level: " + level + ".")
		return
	}
	reason := e.FullAccessBlockedReason
	switch reason {
	case "", "sandbox":
		reason = "sandbox constraints"
	}
	w.add("Auto-approved /elevated full is unavailable here (" + reason + ").")
	w.add("Current elevated level: " + level + " (full auto-approval unavailable here; use ask/on instead).")
}

// ownerIDs renders the Authorized Senders list: trimmed non-empty ids, each
// replaced by 12 hex chars of HMAC-SHA256(secret, id) (SHA-256 without a
// secret) in hash display mode.
func ownerIDs(p *Params) string {
	var b strings.Builder
	for _, id := range p.OwnerNumbers {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if p.OwnerDisplay == "hash" {
			var sum []byte
			if p.OwnerDisplaySecret != "" {
				m := hmac.New(sha256.New, []byte(p.OwnerDisplaySecret))
				m.Write([]byte(id))
				sum = m.Sum(nil)
			} else {
				s := sha256.Sum256([]byte(id))
				sum = s[:]
			}
			b.WriteString(hex.EncodeToString(sum)[:12])
		} else {
			b.WriteString(id)
		}
	}
	return b.String()
}

// contextOrder is CONTEXT_FILE_ORDER on the lowercase basename.
func contextOrder(base string) int {
	switch base {
	case "agents.md":
		return 10
	case "soul.md":
		return 20
	case "identity.md":
		return 30
	case "user.md":
		return 40
	case "tools.md":
		return 50
	case "bootstrap.md":
		return 60
	case "memory.md":
		return 70
	}
	return 1 << 30
}

func isDynamicFile(p string) bool {
	return strings.EqualFold(path.Base(p), "heartbeat.md")
}

// stableFiles returns the non-heartbeat files with a path, in prompt order.
func stableFiles(files []ContextFile) []ContextFile {
	var out []ContextFile
	for _, f := range files {
		if strings.TrimSpace(f.Path) == "" || isDynamicFile(f.Path) {
			continue
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, compareContextFiles)
	return out
}

func compareContextFiles(a, b ContextFile) int {
	ba, bb := strings.ToLower(path.Base(a.Path)), strings.ToLower(path.Base(b.Path))
	if oa, ob := contextOrder(ba), contextOrder(bb); oa != ob {
		if oa < ob {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ba, bb); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}

// SanitizeContent is the content rule of Project Context: the default
// heartbeat snippet is deleted and runs of 3+ newlines collapse to 2.
func SanitizeContent(s string) string {
	if !strings.Contains(s, defaultHeartbeatSnippet) && !strings.Contains(s, "\n\n\n") {
		return s
	}
	var w lineWriter
	appendContent(&w, s)
	return string(w.b)
}

// appendFileContent appends a context file's content element.
func appendFileContent(w *lineWriter, f *ContextFile) {
	if f.Clean {
		w.add(f.Content)
		return
	}
	appendContent(w, f.Content)
}

// appendContent appends a context file's content as one element, with the
// default heartbeat snippet removed and runs of 3+ newlines collapsed to 2.
// It allocates nothing unless the snippet is present.
func appendContent(w *lineWriter, s string) {
	if strings.Contains(s, defaultHeartbeatSnippet) {
		s = strings.ReplaceAll(s, defaultHeartbeatSnippet, "")
	}
	if s == "" {
		return
	}
	w.sep()
	for {
		i := strings.Index(s, "\n\n\n")
		if i < 0 {
			w.b = append(w.b, s...)
			return
		}
		w.b = append(w.b, s[:i+2]...)
		j := i + 3
		for j < len(s) && s[j] == '\n' {
			j++
		}
		s = s[j:]
	}
}

// renderDynamic appends the part below the cache boundary.
func renderDynamic(w *lineWriter, p *Params) {
	full := p.Mode == ModeFull

	// Dynamic project context: heartbeat.md files, by path.
	nDyn, hasStable := 0, false
	for _, f := range p.ContextFiles {
		if strings.TrimSpace(f.Path) == "" {
			continue
		}
		if isDynamicFile(f.Path) {
			nDyn++
		} else {
			hasStable = true
		}
	}
	if nDyn > 0 {
		w.begin("dynamic_project_context")
		if hasStable {
			w.add("# Dynamic Project Context")
		} else {
			w.add("# Project Context")
		}
		w.add(dynamicContextIntro)
		w.end()
		// Selection in path order without allocating (there is usually one).
		last := ""
		for k := 0; k < nDyn; k++ {
			var next *ContextFile
			for i := range p.ContextFiles {
				f := &p.ContextFiles[i]
				if strings.TrimSpace(f.Path) == "" || !isDynamicFile(f.Path) {
					continue
				}
				if k > 0 && f.Path <= last {
					continue
				}
				if next == nil || f.Path < next.Path {
					next = f
				}
			}
			if next == nil {
				break
			}
			last = next.Path
			w.beginFile(next.Path)
			w.sep()
			w.b = append(w.b, "## "...)
			w.b = append(w.b, next.Path...)
			appendFileContent(w, next)
			w.end()
		}
	}

	channel := strings.ToLower(strings.TrimSpace(p.Runtime.Channel))
	toolOnly := p.SourceReplyDeliveryMode == "message_tool_only"
	if full && channel == "webchat" {
		w.begin("control_ui_embed")
		w.add(controlUIEmbedHead)
		if toolOnly {
			w.add(controlUIEmbedMsgTool)
		} else {
			w.add(controlUIEmbedMedia)
		}
		w.add(controlUIEmbedTail)
		w.end()
	}

	if full {
		w.begin("messaging")
		w.add("## Messaging")
		if toolOnly {
			w.add(msgReplyToolOnly)
		} else {
			w.add(msgReplyAuto)
		}
		w.add(msgCrossSession)
		hasSpawn, hasMessage := false, false
		for _, n := range p.ToolNames {
			if len(n) > 0 && (n[0] == ' ' || n[0] == '\t' || n[len(n)-1] == ' ' || n[len(n)-1] == '\t') {
				n = strings.TrimSpace(n)
			}
			hasSpawn = hasSpawn || strings.EqualFold(n, "sessions_spawn")
			hasMessage = hasMessage || strings.EqualFold(n, "message")
		}
		if hasSpawn {
			w.add(msgSubagentOrch)
		}
		if toolOnly {
			w.add(msgCompletionTool)
		} else {
			w.add(msgCompletionAuto)
		}
		w.add(msgNoExec)
		if hasMessage {
			w.add(msgToolHead)
			if toolOnly {
				w.add(msgToolSendOnly)
			} else {
				w.add(msgToolSendAuto)
			}
			opts := p.MessageChannelOptions
			if opts == "" {
				opts = DefaultMessageChannelOptions
			}
			w.sep()
			w.b = append(w.b, "- If multiple channels are configured, pass `channel` ("...)
			w.b = append(w.b, opts...)
			w.b = append(w.b, ")."...)
			if toolOnly {
				w.add(msgToolVisibleOnly)
			} else {
				w.add(msgToolVisibleAuto)
			}
			if hasCapability(p.Runtime.Capabilities, "inlinebuttons") {
				w.add(msgInlineButtons)
			} else if channel != "" {
				w.sep()
				w.b = append(w.b, "- Inline buttons not enabled for "...)
				w.b = append(w.b, channel...)
				w.b = append(w.b, ". If you need them, ask to set "...)
				w.b = append(w.b, channel...)
				w.b = append(w.b, ".capabilities.inlineButtons (\"dm\"|\"group\"|\"all\"|\"allowlist\")."...)
			}
			for _, h := range p.MessageToolHints {
				w.add(h)
			}
		}
		w.end()
	}

	if full {
		if hint := strings.TrimSpace(p.TTSHint); hint != "" {
			w.begin("voice")
			w.add("## Voice (TTS)")
			w.add(hint)
			w.end()
		}
	}

	if extra := strings.TrimSpace(p.ExtraSystemPrompt); extra != "" {
		w.begin("extra_system_prompt")
		if p.Mode == ModeMinimal {
			w.add("## Subagent Context")
		} else {
			w.add("## Group Chat Context")
		}
		w.add(extra)
		w.end()
	}

	if r := p.Reactions; r != nil {
		w.begin("reactions")
		w.add("## Reactions")
		w.sep()
		w.b = append(w.b, "Reactions are enabled for "...)
		w.b = append(w.b, r.Channel...)
		if r.Level == "minimal" {
			w.b = append(w.b, " in MINIMAL mode.\n"...)
			w.b = append(w.b, reactionsMinimal...)
		} else {
			w.b = append(w.b, " in EXTENSIVE mode.\n"...)
			w.b = append(w.b, reactionsExtensive...)
		}
		w.end()
	}

	if s := normalizeBlock(p.Provider.DynamicSuffix); s != "" {
		w.begin("provider_dynamic_suffix")
		w.add(s)
		w.end()
	}

	if full && strings.TrimSpace(p.HeartbeatPrompt) != "" {
		w.begin("heartbeats")
		w.add(heartbeatsSection)
		w.end()
	}

	w.begin("runtime")
	w.add("## Runtime")
	w.sep()
	w.b = appendRuntimeLine(w.b, &p.Runtime, p.DefaultThinkLevel)
	w.sep()
	w.b = append(w.b, "Reasoning: "...)
	if p.ReasoningLevel != "" {
		w.b = append(w.b, p.ReasoningLevel...)
	} else {
		w.b = append(w.b, "off"...)
	}
	w.b = append(w.b, reasoningLineTail...)
	w.end()
}

func hasCapability(caps []string, want string) bool {
	for _, c := range caps {
		if strings.EqualFold(strings.TrimSpace(c), want) {
			return true
		}
	}
	return false
}

// appendRuntimeLine appends "Runtime: f1 | f2 | …".
func appendRuntimeLine(b []byte, r *RuntimeInfo, think string) []byte {
	b = append(b, "Runtime: "...)
	n := 0
	field := func(k, v string) {
		if v == "" {
			return
		}
		if n > 0 {
			b = append(b, " | "...)
		}
		n++
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	field("agent", r.AgentID)
	field("host", r.Host)
	field("repo", r.RepoRoot)
	if r.OS != "" {
		if n > 0 {
			b = append(b, " | "...)
		}
		n++
		b = append(b, "os="...)
		b = append(b, r.OS...)
		if r.Arch != "" {
			b = append(b, " ("...)
			b = append(b, r.Arch...)
			b = append(b, ')')
		}
	} else {
		field("arch", r.Arch)
	}
	field("node", r.Node)
	field("model", r.Model)
	field("default_model", r.DefaultModel)
	field("shell", r.Shell)
	channel := strings.TrimSpace(r.Channel)
	if channel != "" {
		field("channel", strings.ToLower(channel))
		b = append(b, " | capabilities="...)
		n++
		b = appendCapabilities(b, r.Capabilities)
	}
	if think == "" {
		think = "off"
	}
	field("thinking", think)
	return b
}

// appendCapabilities appends the normalised capability list: cleaned,
// lowercased, de-duplicated and sorted, or "none". It works in stack
// buffers: no allocation for up to 16 ASCII capabilities of 256 bytes in
// total.
func appendCapabilities(b []byte, caps []string) []byte {
	var arena [256]byte
	type span struct{ off, n int }
	var arr [16]span
	cnt, used := 0, 0
	get := func(s span) []byte { return arena[s.off : s.off+s.n] }
	for _, c := range caps {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if used+len(c) > len(arena) || cnt == len(arr) || !isASCII(c) {
			return appendCapabilitiesSlow(b, caps)
		}
		sp := span{off: used}
		for i := 0; i < len(c); i++ {
			ch := c[i]
			if ch == '\r' {
				continue
			}
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			arena[used] = ch
			used++
			sp.n++
		}
		if sp.n == 0 {
			continue
		}
		// Insertion in sorted position, skipping duplicates.
		x := get(sp)
		pos, dup := cnt, false
		for i := 0; i < cnt; i++ {
			c := bytes.Compare(get(arr[i]), x)
			if c == 0 {
				dup = true
				break
			}
			if c > 0 {
				pos = i
				break
			}
		}
		if dup {
			continue
		}
		copy(arr[pos+1:cnt+1], arr[pos:cnt])
		arr[pos] = sp
		cnt++
	}
	if cnt == 0 {
		return append(b, "none"...)
	}
	for i := 0; i < cnt; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, get(arr[i])...)
	}
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendCapabilitiesSlow handles many, long or non-ASCII capabilities.
func appendCapabilitiesSlow(b []byte, caps []string) []byte {
	var list []string
	for _, c := range caps {
		c = strings.ToLower(strings.TrimSpace(strings.ReplaceAll(c, "\r", "")))
		if c == "" || slices.Contains(list, c) {
			continue
		}
		list = append(list, c)
	}
	if len(list) == 0 {
		return append(b, "none"...)
	}
	slices.Sort(list)
	return append(b, strings.Join(list, ",")...)
}

// normalizeBlock normalises a provider block: CRLF to LF, trailing spaces
// removed per line, trimmed. It returns s itself when nothing changes.
func normalizeBlock(s string) string {
	if s == "" {
		return ""
	}
	needs := strings.Contains(s, "\r") || strings.Contains(s, " \n") || strings.Contains(s, "\t\n")
	if !needs {
		return strings.TrimSpace(s)
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// sanitizeLiteral removes control and format characters (line breaks,
// bidi overrides) from a value inserted into the prompt literally.
func sanitizeLiteral(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
}
