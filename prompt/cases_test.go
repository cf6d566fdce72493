package prompt

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ocbench/ocbench/internal/specases"
)

// The spec's cases (testdata/spec/prompt-cases.json): every case of the
// sections systemPrompt, cacheBoundary, bootstrap, bootstrapWarning, skills
// and promptMode becomes a byte-exact assertion. (estimateTokens is tested
// in package tokenize.)

type specCase struct {
	Name             string          `json:"name"`
	Fn               string          `json:"fn"`
	Input            json.RawMessage `json:"input"`
	Expected         json.RawMessage `json:"expected"`
	ExpectedWarnings []string        `json:"expectedWarnings"`
	ExpectedLengths  []int           `json:"expectedLengths"`
	ExpectedLength   *int            `json:"expectedLength"`
	Marker           string          `json:"marker"`
}

// loadCases returns a section's cases. The harness runs any case file of
// the spec's format: it asserts only that the file holds cases at all; a
// section it does not have is skipped, not failed.
func loadCases(t testing.TB, section string) []specCase {
	t.Helper()
	doc := loadCaseFile(t)
	var cases []specCase
	if raw, ok := doc[section]; ok {
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) == 0 {
		t.Skipf("the case file has no %s cases", section)
	}
	return cases
}

// loadCaseFile reads the case file and fails if it holds no case.
func loadCaseFile(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile("../testdata/spec/prompt-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, v := range doc {
		var list []json.RawMessage
		if k != "meta" && json.Unmarshal(v, &list) == nil {
			n += len(list)
		}
	}
	if n == 0 {
		t.Fatal("the case file holds no cases")
	}
	return doc
}

// caseMeta is the file's record of environment-dependent values.
type caseMeta struct {
	MessageChannelOptions string `json:"messageChannelOptions"`
	TZ                    string `json:"tz"`
	HomeDir               string `json:"homeDir"`
	Home                  string `json:"home"`
}

func loadMeta(t testing.TB) caseMeta {
	t.Helper()
	var m caseMeta
	if raw, ok := loadCaseFile(t)["meta"]; ok {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// caseString is a boundary function's prompt argument: the input itself
// or its systemPrompt field.
func caseString(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	var v any
	decodeInto(t, raw, &v)
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		s, _ := x["systemPrompt"].(string)
		return s
	}
	t.Fatalf("input %s is neither a string nor an object", raw)
	return ""
}

// decodeInto decodes the encodings in raw, then unmarshals into dst.
func decodeInto(t testing.TB, raw json.RawMessage, dst any) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(specases.Expand(v))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		t.Fatal(err)
	}
}

// caseParams is buildAgentSystemPrompt's parameter object as JSON: every
// input the function takes (as OpenClaw names them), not only those the
// shared cases happen to use.
type caseParams struct {
	WorkspaceDir               string            `json:"workspaceDir"`
	PromptMode                 string            `json:"promptMode"`
	ToolNames                  []string          `json:"toolNames"`
	ToolSummaries              map[string]string `json:"toolSummaries"`
	NativeCommandGuidanceLines []string          `json:"nativeCommandGuidanceLines"`
	UserTimezone               string            `json:"userTimezone"`
	OwnerNumbers               []string          `json:"ownerNumbers"`
	OwnerDisplay               string            `json:"ownerDisplay"`
	OwnerDisplaySecret         string            `json:"ownerDisplaySecret"`
	SkillsPrompt               string            `json:"skillsPrompt"`
	HeartbeatPrompt            string            `json:"heartbeatPrompt"`
	ExtraSystemPrompt          string            `json:"extraSystemPrompt"`
	ReasoningTagHint           bool              `json:"reasoningTagHint"`
	ReasoningLevel             string            `json:"reasoningLevel"`
	DefaultThinkLevel          string            `json:"defaultThinkLevel"`
	BootstrapMode              string            `json:"bootstrapMode"`
	BootstrapTruncationNotice  string            `json:"bootstrapTruncationNotice"`
	SourceReplyDeliveryMode    string            `json:"sourceReplyDeliveryMode"`
	SilentReplyPromptMode      string            `json:"silentReplyPromptMode"`
	ModelAliasLines            []string          `json:"modelAliasLines"`
	WorkspaceNotes             []string          `json:"workspaceNotes"`
	DocsPath                   string            `json:"docsPath"`
	SourcePath                 string            `json:"sourcePath"`
	LocalSource                string            `json:"localSource"`
	IncludeMemorySection       *bool             `json:"includeMemorySection"`
	MemoryCitationsMode        string            `json:"memoryCitationsMode"`
	MessageChannelOptions      string            `json:"messageChannelOptions"`
	MessageToolHints           []string          `json:"messageToolHints"`
	TTSHint                    string            `json:"ttsHint"`
	SystemPromptOverride       string            `json:"systemPromptOverride"`
	ReactionGuidance           *struct {
		Level   string `json:"level"`
		Channel string `json:"channel"`
	} `json:"reactionGuidance"`
	PromptContribution *struct {
		StablePrefix     string `json:"stablePrefix"`
		DynamicSuffix    string `json:"dynamicSuffix"`
		SectionOverrides struct {
			InteractionStyle string `json:"interaction_style"`
			ToolCallStyle    string `json:"tool_call_style"`
			ExecutionBias    string `json:"execution_bias"`
		} `json:"sectionOverrides"`
	} `json:"promptContribution"`
	ContextFiles []struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"contextFiles"`
	RuntimeInfo struct {
		AgentID      string   `json:"agentId"`
		Host         string   `json:"host"`
		OS           string   `json:"os"`
		Arch         string   `json:"arch"`
		Node         string   `json:"node"`
		Model        string   `json:"model"`
		DefaultModel string   `json:"defaultModel"`
		Channel      string   `json:"channel"`
		Capabilities []string `json:"capabilities"`
		RepoRoot     string   `json:"repoRoot"`
		Shell        string   `json:"shell"`
	} `json:"runtimeInfo"`
	SandboxInfo *struct {
		Enabled               bool   `json:"enabled"`
		ContainerWorkspaceDir string `json:"containerWorkspaceDir"`
		WorkspaceDir          string `json:"workspaceDir"`
		WorkspaceAccess       string `json:"workspaceAccess"`
		Elevated              *struct {
			Allowed                 bool   `json:"allowed"`
			DefaultLevel            string `json:"defaultLevel"`
			FullAccessAvailable     bool   `json:"fullAccessAvailable"`
			FullAccessBlockedReason string `json:"fullAccessBlockedReason"`
		} `json:"elevated"`
	} `json:"sandboxInfo"`
}

func (c *caseParams) params(t testing.TB, meta caseMeta) *Params {
	mode, err := ParseMode(c.PromptMode)
	if err != nil {
		t.Fatal(err)
	}
	p := &Params{
		WorkspaceDir: c.WorkspaceDir, Mode: mode, ToolNames: c.ToolNames, ToolSummaries: c.ToolSummaries,
		NativeCommandGuidance: c.NativeCommandGuidanceLines, UserTimezone: c.UserTimezone,
		OwnerNumbers: c.OwnerNumbers, OwnerDisplay: c.OwnerDisplay, OwnerDisplaySecret: c.OwnerDisplaySecret,
		SkillsPrompt: c.SkillsPrompt, HeartbeatPrompt: c.HeartbeatPrompt, ExtraSystemPrompt: c.ExtraSystemPrompt,
		ReasoningTagHint: c.ReasoningTagHint, ReasoningLevel: c.ReasoningLevel, DefaultThinkLevel: c.DefaultThinkLevel,
		BootstrapTruncationNotice: c.BootstrapTruncationNotice, SourceReplyDeliveryMode: c.SourceReplyDeliveryMode,
		SilentReplyPromptMode: c.SilentReplyPromptMode, ModelAliasLines: c.ModelAliasLines, WorkspaceNotes: c.WorkspaceNotes,
		DocsPath: c.DocsPath, LocalSource: c.LocalSource, MessageToolHints: c.MessageToolHints, TTSHint: c.TTSHint,
		SystemPromptOverride: c.SystemPromptOverride,
		// The memory plugin's section only when the case asks for it;
		// citations are on unless memory.citations is "off".
		MemoryEnabled:         c.IncludeMemorySection != nil && *c.IncludeMemorySection,
		MemoryCitations:       c.MemoryCitationsMode != "off",
		MessageChannelOptions: c.MessageChannelOptions,
	}
	if p.LocalSource == "" {
		p.LocalSource = c.SourcePath
	}
	if p.MessageChannelOptions == "" {
		p.MessageChannelOptions = meta.MessageChannelOptions
	}
	switch c.BootstrapMode {
	case "full":
		p.BootstrapMode = BootstrapFull
	case "limited":
		p.BootstrapMode = BootstrapLimited
	}
	if g := c.ReactionGuidance; g != nil {
		p.Reactions = &ReactionGuidance{Level: g.Level, Channel: g.Channel}
	}
	if pc := c.PromptContribution; pc != nil {
		p.Provider = ProviderContribution{StablePrefix: pc.StablePrefix, DynamicSuffix: pc.DynamicSuffix,
			InteractionStyle: pc.SectionOverrides.InteractionStyle, ToolCallStyle: pc.SectionOverrides.ToolCallStyle,
			ExecutionBias: pc.SectionOverrides.ExecutionBias}
	}
	for _, f := range c.ContextFiles {
		p.ContextFiles = append(p.ContextFiles, ContextFile{Path: f.Path, Content: f.Content})
	}
	r := c.RuntimeInfo
	p.Runtime = RuntimeInfo{AgentID: r.AgentID, Host: r.Host, OS: r.OS, Arch: r.Arch, Node: r.Node, Model: r.Model,
		DefaultModel: r.DefaultModel, Channel: r.Channel, Capabilities: r.Capabilities, RepoRoot: r.RepoRoot, Shell: r.Shell}
	p.ApprovalUI = ApprovalUIFor(r.Channel, r.Capabilities)
	if s := c.SandboxInfo; s != nil {
		p.Sandbox = SandboxInfo{Enabled: s.Enabled, ContainerWorkspaceDir: s.ContainerWorkspaceDir, WorkspaceDir: s.WorkspaceDir, WorkspaceAccess: s.WorkspaceAccess}
		if e := s.Elevated; e != nil {
			p.Sandbox.Elevated = &Elevated{Allowed: e.Allowed, DefaultLevel: e.DefaultLevel, FullAccessAvailable: e.FullAccessAvailable, FullAccessBlockedReason: e.FullAccessBlockedReason}
		}
	}
	return p
}

// firstDiff shows where two strings part, for readable failures.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-120)
	return fmt.Sprintf("first difference at byte %d (len got %d, want %d)\n got: %q\nwant: %q", i, len(got), len(want), got[lo:min(len(got), i+120)], want[lo:min(len(want), i+120)])
}

func TestSpecSystemPrompt(t *testing.T) {
	meta := loadMeta(t)
	for _, c := range loadCases(t, "systemPrompt") {
		t.Run(c.Name, func(t *testing.T) {
			var in caseParams
			decodeInto(t, c.Input, &in)
			var want string
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			p := in.params(t, meta)
			for _, r := range []*Renderer{{}, NewCachedRenderer(1<<20, nil)} {
				for pass := 0; pass < 2; pass++ { // cold, then warm
					got, lay, err := r.AppendPrompt([]byte("PREFIX:"), p)
					if err != nil {
						t.Fatal(err)
					}
					if !strings.HasPrefix(string(got), "PREFIX:") {
						t.Fatal("dst prefix lost")
					}
					g := string(got[len("PREFIX:"):])
					if g != want {
						t.Fatal(firstDiff(g, want))
					}
					if lay.Len != len(want) {
						t.Fatalf("layout len %d", lay.Len)
					}
					if lay.Marker >= 0 && g[lay.Marker:lay.Marker+len(CacheBoundary)] != CacheBoundary {
						t.Fatalf("marker not at %d", lay.Marker)
					}
					st, _, _ := SplitBoundary(g)
					if lay.StableLen != len(st) {
						t.Fatalf("StableLen %d, split says %d", lay.StableLen, len(st))
					}
				}
			}
		})
	}
}

func TestSpecCacheBoundary(t *testing.T) {
	for _, c := range loadCases(t, "cacheBoundary") {
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case strings.HasPrefix(c.Fn, "stripSystemPromptCacheBoundary"):
				in := caseString(t, c.Input)
				var want string
				_ = json.Unmarshal(c.Expected, &want)
				if got := StripBoundary(in); got != want {
					t.Fatal(firstDiff(got, want))
				}
			case strings.HasPrefix(c.Fn, "prependSystemPromptAdditionAfterCacheBoundary"):
				var in struct {
					SystemPrompt         string `json:"systemPrompt"`
					SystemPromptAddition string `json:"systemPromptAddition"`
				}
				decodeInto(t, c.Input, &in)
				var want string
				_ = json.Unmarshal(c.Expected, &want)
				if got := PrependAfterBoundary(in.SystemPrompt, in.SystemPromptAddition); got != want {
					t.Fatal(firstDiff(got, want))
				}
			default:
				if c.Marker != "" && c.Marker != CacheBoundary {
					t.Fatalf("marker %q != %q", c.Marker, CacheBoundary)
				}
				in := caseString(t, c.Input)
				var want struct {
					StablePrefix  string `json:"stablePrefix"`
					DynamicSuffix string `json:"dynamicSuffix"`
				}
				if err := json.Unmarshal(c.Expected, &want); err != nil {
					t.Fatal(err)
				}
				st, dy, ok := SplitBoundary(in)
				if !ok || st != want.StablePrefix || dy != want.DynamicSuffix {
					t.Fatalf("split: ok=%v\n%s\n%s", ok, firstDiff(st, want.StablePrefix), firstDiff(dy, want.DynamicSuffix))
				}
				if s := StripBoundary(in); strings.Contains(s, "OPENCLAW_CACHE_BOUNDARY") || s != st+"\n\n\n"+dy {
					t.Fatalf("strip: %s", firstDiff(s, st+"\n\n\n"+dy))
				}
			}
		})
	}
}

func TestSpecBootstrap(t *testing.T) {
	for _, c := range loadCases(t, "bootstrap") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Files []struct {
					Name    string `json:"name"`
					Path    string `json:"path"`
					Content string `json:"content"`
					Missing bool   `json:"missing"`
				} `json:"files"`
				Opts struct {
					MaxChars      int `json:"maxChars"`
					TotalMaxChars int `json:"totalMaxChars"`
				} `json:"opts"`
			}
			decodeInto(t, c.Input, &in)
			var want []struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			var files []BootstrapFile
			for _, f := range in.Files {
				files = append(files, BootstrapFile{Name: f.Name, Path: f.Path, Content: f.Content, Missing: f.Missing})
			}
			got, warnings := BuildContextFiles(files, Budget{MaxChars: in.Opts.MaxChars, TotalMaxChars: in.Opts.TotalMaxChars})
			if len(got) != len(want) {
				t.Fatalf("%d files, want %d: %+v", len(got), len(want), got)
			}
			for i := range want {
				if got[i].Path != want[i].Path || got[i].Content != want[i].Content {
					t.Fatalf("file %d: %s", i, firstDiff(got[i].Content, want[i].Content))
				}
				if got[i].InjectedChars != len16(got[i].Content) {
					t.Fatalf("file %d: InjectedChars %d, content %d", i, got[i].InjectedChars, len16(got[i].Content))
				}
				if c.ExpectedLengths != nil && (i >= len(c.ExpectedLengths) || got[i].InjectedChars != c.ExpectedLengths[i]) {
					t.Fatalf("file %d: length %d, want %v", i, got[i].InjectedChars, c.ExpectedLengths)
				}
			}
			if c.ExpectedWarnings != nil && (fmt.Sprint(warnings) != fmt.Sprint(c.ExpectedWarnings) || len(warnings) != len(c.ExpectedWarnings)) {
				t.Fatalf("warnings %q, want %q", warnings, c.ExpectedWarnings)
			}
		})
	}
}

func TestSpecBootstrapWarning(t *testing.T) {
	for _, c := range loadCases(t, "bootstrapWarning") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				UserPrompt     *string  `json:"userPrompt"`
				Prompt         *string  `json:"prompt"`
				MaxChars       int      `json:"bootstrapMaxChars"`
				TotalMaxChars  int      `json:"bootstrapTotalMaxChars"`
				Mode           string   `json:"mode"`
				SeenSignatures []string `json:"seenSignatures"`
				RawFiles       []struct {
					Name     string `json:"name"`
					Path     string `json:"path"`
					Missing  bool   `json:"missing"`
					RawChars int    `json:"rawChars"`
				} `json:"rawFiles"`
				Injected []struct {
					Path  string `json:"path"`
					Chars int    `json:"chars"`
				} `json:"injected"`
			}
			decodeInto(t, c.Input, &in)
			var want struct {
				WarningShown          bool     `json:"warningShown"`
				Lines                 []string `json:"lines"`
				Signature             string   `json:"signature"`
				UserPromptWithWarning string   `json:"userPromptWithWarning"`
				SystemNotice          *string  `json:"systemNotice"`
			}
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			mode, err := ParseWarningMode(in.Mode)
			if err != nil {
				t.Fatal(err)
			}
			var raw []RawFileStat
			for _, f := range in.RawFiles {
				raw = append(raw, RawFileStat{Name: f.Name, Path: f.Path, Missing: f.Missing, RawChars: f.RawChars})
			}
			var inj []InjectedStat
			for _, f := range in.Injected {
				inj = append(inj, InjectedStat{Path: f.Path, Chars: f.Chars})
			}
			w := AnalyzeBudget(in.MaxChars, in.TotalMaxChars, raw, inj, mode, in.SeenSignatures)
			if w.Shown != want.WarningShown {
				t.Fatalf("shown %v", w.Shown)
			}
			if fmt.Sprintf("%q", w.Lines) != fmt.Sprintf("%q", want.Lines) && !(len(w.Lines) == 0 && len(want.Lines) == 0) {
				t.Fatalf("lines %q, want %q", w.Lines, want.Lines)
			}
			if w.Signature != want.Signature {
				t.Fatal(firstDiff(w.Signature, want.Signature))
			}
			// The shared cases apply the warning to "User prompt"; a case
			// may name its own.
			prompt := "User prompt"
			if in.UserPrompt != nil {
				prompt = *in.UserPrompt
			} else if in.Prompt != nil {
				prompt = *in.Prompt
			}
			if got := w.AppendToUserPrompt(prompt); got != want.UserPromptWithWarning {
				t.Fatal(firstDiff(got, want.UserPromptWithWarning))
			}
			wantNotice := ""
			if want.SystemNotice != nil {
				wantNotice = *want.SystemNotice
			}
			if w.SystemNotice != wantNotice {
				t.Fatal(firstDiff(w.SystemNotice, wantNotice))
			}
		})
	}
}

func TestSpecSkills(t *testing.T) {
	meta := loadMeta(t)
	for _, c := range loadCases(t, "skills") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Skills []struct {
					Name                   string `json:"name"`
					Description            string `json:"description"`
					FilePath               string `json:"filePath"`
					BaseDir                string `json:"baseDir"`
					Source                 string `json:"source"`
					DisableModelInvocation bool   `json:"disableModelInvocation"`
					Exposure               *struct {
						IncludeInAvailableSkillsPrompt *bool `json:"includeInAvailableSkillsPrompt"`
					} `json:"exposure"`
				} `json:"skills"`
				AgentID     string   `json:"agentId"`
				SkillFilter []string `json:"skillFilter"`
				HomeDir     string   `json:"homeDir"`
				Eligibility struct {
					Remote struct {
						Note string `json:"note"`
					} `json:"remote"`
				} `json:"eligibility"`
				Config struct {
					Skills struct {
						Limits struct {
							MaxSkillsInPrompt    int `json:"maxSkillsInPrompt"`
							MaxSkillsPromptChars int `json:"maxSkillsPromptChars"`
						} `json:"limits"`
					} `json:"skills"`
					Agents struct {
						List []struct {
							ID           string `json:"id"`
							SkillsLimits *struct {
								MaxSkillsPromptChars *int `json:"maxSkillsPromptChars"`
							} `json:"skillsLimits"`
						} `json:"list"`
					} `json:"agents"`
				} `json:"config"`
			}
			decodeInto(t, c.Input, &in)
			var want string
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			var skills []Skill
			for _, s := range in.Skills {
				if in.SkillFilter != nil && !slices.Contains(in.SkillFilter, s.Name) {
					continue
				}
				sk := Skill{Name: s.Name, Description: s.Description, FilePath: s.FilePath, BaseDir: s.BaseDir, Source: s.Source, DisableModelInvocation: s.DisableModelInvocation}
				if e := s.Exposure; e != nil && e.IncludeInAvailableSkillsPrompt != nil && !*e.IncludeInAvailableSkillsPrompt {
					sk.HideFromPrompt = true
				}
				skills = append(skills, sk)
			}
			l := in.Config.Skills.Limits
			limits := SkillLimits{MaxSkillsInPrompt: l.MaxSkillsInPrompt, MaxSkillsPromptChars: l.MaxSkillsPromptChars}
			for _, a := range in.Config.Agents.List {
				// The agent's own limit wins (skillsLimits.maxSkillsPromptChars).
				if in.AgentID != "" && strings.EqualFold(a.ID, in.AgentID) && a.SkillsLimits != nil && a.SkillsLimits.MaxSkillsPromptChars != nil {
					limits.MaxSkillsPromptChars = *a.SkillsLimits.MaxSkillsPromptChars
				}
			}
			home := in.HomeDir
			if home == "" {
				home = cmp.Or(meta.HomeDir, meta.Home)
			}
			res := BuildSkillsPrompt(skills, limits, home, strings.TrimSpace(in.Eligibility.Remote.Note))
			if res.Prompt != want {
				t.Fatal(firstDiff(res.Prompt, want))
			}
			if c.ExpectedLength != nil && len16(res.Prompt) != *c.ExpectedLength {
				t.Fatalf("length %d, want %d", len16(res.Prompt), *c.ExpectedLength)
			}
		})
	}
}

// TestSkillLocationsUnderHome: §1.10 step 2, locations under the home
// directory are written "~/…", by default under the user's real home.
func TestSkillLocationsUnderHome(t *testing.T) {
	skills := []Skill{{Name: "a", Description: "d", FilePath: "/home/u/.openclaw/skills/a/SKILL.md"}, {Name: "b", Description: "d", FilePath: "/home/user2/x/SKILL.md"}}
	got := BuildSkillsPrompt(skills, SkillLimits{}, "/home/u/", "").Prompt
	if !strings.Contains(got, "<location>~/.openclaw/skills/a/SKILL.md</location>") || !strings.Contains(got, "<location>/home/user2/x/SKILL.md</location>") {
		t.Fatal(got)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := home + "/ws"
	if err := MaterializeSample(ws); err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(&Config{}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Params.SkillsPrompt, "<location>~/ws/skills/") {
		t.Fatalf("skill locations under $HOME are not shortened:\n%s", res.Params.SkillsPrompt)
	}
}

func TestSpecPromptMode(t *testing.T) {
	for i, c := range loadCases(t, "promptMode") {
		var key *string
		if err := json.Unmarshal(c.Input, &key); err != nil {
			t.Fatal(err)
		}
		var want string
		_ = json.Unmarshal(c.Expected, &want)
		k := ""
		if key != nil {
			k = *key
		}
		if got := ModeForSession(k).String(); got != want {
			t.Errorf("case %d %q: %s, want %s", i, k, got, want)
		}
	}
}
