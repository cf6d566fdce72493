package prompt

import (
	"encoding/json"
	"fmt"
	"github.com/ocbench/ocbench/internal/specases"
	"os"
	"strings"
	"testing"
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

func loadCases(t testing.TB, section string) []specCase {
	t.Helper()
	raw, err := os.ReadFile("../testdata/spec/prompt-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var cases []specCase
	if err := json.Unmarshal(doc[section], &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no cases in %s", section)
	}
	return cases
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

// caseParams is buildAgentSystemPrompt's parameter object as JSON.
type caseParams struct {
	WorkspaceDir              string   `json:"workspaceDir"`
	PromptMode                string   `json:"promptMode"`
	ToolNames                 []string `json:"toolNames"`
	UserTimezone              string   `json:"userTimezone"`
	OwnerNumbers              []string `json:"ownerNumbers"`
	OwnerDisplay              string   `json:"ownerDisplay"`
	OwnerDisplaySecret        string   `json:"ownerDisplaySecret"`
	SkillsPrompt              string   `json:"skillsPrompt"`
	HeartbeatPrompt           string   `json:"heartbeatPrompt"`
	ExtraSystemPrompt         string   `json:"extraSystemPrompt"`
	ReasoningTagHint          bool     `json:"reasoningTagHint"`
	ReasoningLevel            string   `json:"reasoningLevel"`
	DefaultThinkLevel         string   `json:"defaultThinkLevel"`
	BootstrapMode             string   `json:"bootstrapMode"`
	BootstrapTruncationNotice string   `json:"bootstrapTruncationNotice"`
	SourceReplyDeliveryMode   string   `json:"sourceReplyDeliveryMode"`
	ContextFiles              []struct {
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

func (c *caseParams) params(t testing.TB) *Params {
	mode, err := ParseMode(c.PromptMode)
	if err != nil {
		t.Fatal(err)
	}
	p := &Params{
		WorkspaceDir: c.WorkspaceDir, Mode: mode, ToolNames: c.ToolNames, UserTimezone: c.UserTimezone,
		OwnerNumbers: c.OwnerNumbers, OwnerDisplay: c.OwnerDisplay, OwnerDisplaySecret: c.OwnerDisplaySecret,
		SkillsPrompt: c.SkillsPrompt, HeartbeatPrompt: c.HeartbeatPrompt, ExtraSystemPrompt: c.ExtraSystemPrompt,
		ReasoningTagHint: c.ReasoningTagHint, ReasoningLevel: c.ReasoningLevel, DefaultThinkLevel: c.DefaultThinkLevel,
		BootstrapTruncationNotice: c.BootstrapTruncationNotice, SourceReplyDeliveryMode: c.SourceReplyDeliveryMode,
		MemoryCitations: true,
	}
	switch c.BootstrapMode {
	case "full":
		p.BootstrapMode = BootstrapFull
	case "limited":
		p.BootstrapMode = BootstrapLimited
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
	for _, c := range loadCases(t, "systemPrompt") {
		t.Run(c.Name, func(t *testing.T) {
			var in caseParams
			decodeInto(t, c.Input, &in)
			var want string
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			p := in.params(t)
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
				var in string
				decodeInto(t, c.Input, &in)
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
				if got[i].InjectedChars != c.ExpectedLengths[i] || len16(got[i].Content) != c.ExpectedLengths[i] {
					t.Fatalf("file %d: length %d, want %d", i, got[i].InjectedChars, c.ExpectedLengths[i])
				}
			}
			if fmt.Sprint(warnings) != fmt.Sprint(c.ExpectedWarnings) || len(warnings) != len(c.ExpectedWarnings) {
				t.Fatalf("warnings %q, want %q", warnings, c.ExpectedWarnings)
			}
		})
	}
}

func TestSpecBootstrapWarning(t *testing.T) {
	for _, c := range loadCases(t, "bootstrapWarning") {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
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
			if got := w.AppendToUserPrompt("User prompt"); got != want.UserPromptWithWarning {
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
				} `json:"skills"`
				Config struct {
					Skills struct {
						Limits struct {
							MaxSkillsInPrompt    int `json:"maxSkillsInPrompt"`
							MaxSkillsPromptChars int `json:"maxSkillsPromptChars"`
						} `json:"limits"`
					} `json:"skills"`
				} `json:"config"`
			}
			decodeInto(t, c.Input, &in)
			var want string
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			var skills []Skill
			for _, s := range in.Skills {
				skills = append(skills, Skill{Name: s.Name, Description: s.Description, FilePath: s.FilePath, BaseDir: s.BaseDir, Source: s.Source, DisableModelInvocation: s.DisableModelInvocation})
			}
			l := in.Config.Skills.Limits
			res := BuildSkillsPrompt(skills, SkillLimits{MaxSkillsInPrompt: l.MaxSkillsInPrompt, MaxSkillsPromptChars: l.MaxSkillsPromptChars}, "", "")
			if res.Prompt != want {
				t.Fatal(firstDiff(res.Prompt, want))
			}
			if c.ExpectedLength != nil && len16(res.Prompt) != *c.ExpectedLength {
				t.Fatalf("length %d, want %d", len16(res.Prompt), *c.ExpectedLength)
			}
		})
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
