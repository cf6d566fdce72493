package prompt

import (
	"errors"
	"fmt"
	"strings"
)

// Mode is OpenClaw's promptMode. The zero value is ModeFull.
type Mode uint8

const (
	// ModeFull renders every section whose condition holds (main agent).
	ModeFull Mode = iota
	// ModeMinimal is used for subagent and cron sessions: it omits Execution
	// Bias, Self-Update, Model Aliases, Documentation, Authorized Senders,
	// Assistant Output Directives, Silent Replies, memory, Control UI Embed,
	// Messaging, Voice and Heartbeats.
	ModeMinimal
	// ModeNone renders the identity line only.
	ModeNone
)

// ErrMode is returned for an unknown prompt mode.
var ErrMode = errors.New("prompt: unknown prompt mode")

// ErrNilParams is returned when a render is asked for nil Params.
var ErrNilParams = errors.New("prompt: nil Params")

func (m Mode) String() string {
	switch m {
	case ModeFull:
		return "full"
	case ModeMinimal:
		return "minimal"
	case ModeNone:
		return "none"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode parses "full", "minimal" or "none".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "full", "":
		return ModeFull, nil
	case "minimal":
		return ModeMinimal, nil
	case "none":
		return ModeNone, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrMode, s)
}

// ModeForSession is OpenClaw's resolvePromptModeForSession: minimal for
// subagent keys ("subagent:…" or "agent:<id>:subagent:…") and cron keys
// ("agent:<id>:cron:…"), full otherwise (no key, main and ACP keys).
func ModeForSession(sessionKey string) Mode {
	k := strings.TrimSpace(strings.ToLower(sessionKey))
	if k == "" {
		return ModeFull
	}
	if strings.HasPrefix(k, "subagent:") {
		return ModeMinimal
	}
	if rest, ok := strings.CutPrefix(k, "agent:"); ok {
		if _, after, ok := strings.Cut(rest, ":"); ok {
			if strings.HasPrefix(after, "subagent:") || strings.HasPrefix(after, "cron:") {
				return ModeMinimal
			}
		}
	}
	return ModeFull
}

// ContextFile is one injected workspace file, as buildBootstrapContextFiles
// produces it (content already budgeted and truncated).
type ContextFile struct {
	// Path is the absolute path shown in the file's heading.
	Path string
	// Content is the injected text.
	Content string
	// Hash, if non-zero, must be xxhash.Sum64String(Content). The resolver
	// sets it so that a warm render never hashes file contents; when zero
	// the renderer computes it.
	Hash uint64
	// Clean tells that Content is already sanitised (SanitizeContent): the
	// renderer then copies it as is. The resolver sets it.
	Clean bool
}

// RuntimeInfo feeds the Runtime line (below the cache boundary).
type RuntimeInfo struct {
	AgentID      string
	Host         string
	RepoRoot     string
	OS           string // e.g. "Linux 6.8.0"
	Arch         string // e.g. "x64"
	Node         string
	Model        string // provider/model
	DefaultModel string
	Shell        string
	Channel      string
	Capabilities []string
}

// Elevated describes the sandbox's elevated-exec policy.
type Elevated struct {
	Allowed                 bool
	DefaultLevel            string // on|off|ask|full
	FullAccessAvailable     bool
	FullAccessBlockedReason string // e.g. "sandbox"
}

// SandboxInfo describes a sandboxed run.
type SandboxInfo struct {
	Enabled               bool
	ContainerWorkspaceDir string
	WorkspaceDir          string // host mount source
	WorkspaceAccess       string // none|ro|rw
	Elevated              *Elevated
}

// ReactionGuidance asks for the Reactions section.
type ReactionGuidance struct {
	Level   string // "minimal" or "extensive"
	Channel string
}

// ProviderContribution is a provider's share of the prompt: section
// overrides (replacing a whole block, heading included), a stable prefix
// above Safety and a dynamic suffix below the boundary.
type ProviderContribution struct {
	StablePrefix     string
	DynamicSuffix    string
	InteractionStyle string
	ToolCallStyle    string
	ExecutionBias    string
}

// ApprovalUI selects the exec-approval guidance in Tool Call Style.
type ApprovalUI uint8

const (
	// ApprovalCommand tells the model to show the /approve command.
	ApprovalCommand ApprovalUI = iota
	// ApprovalNative relies on the channel's native approval buttons.
	ApprovalNative
)

// BootstrapMode is OpenClaw's bootstrapMode.
type BootstrapMode uint8

const (
	BootstrapNone BootstrapMode = iota
	BootstrapLimited
	BootstrapFull
)

// Params are the explicit inputs of one system prompt, mirroring
// buildAgentSystemPrompt's parameters. The renderer reads nothing else: no
// configuration, no environment, no clock.
//
// Stable inputs (those above the cache boundary) are everything except
// Runtime, ReasoningLevel, DefaultThinkLevel, ExtraSystemPrompt, TTSHint,
// Reactions, HeartbeatPrompt, Provider.DynamicSuffix, MessageChannelOptions
// and context files named heartbeat.md.
type Params struct {
	WorkspaceDir string
	Mode         Mode

	// SystemPromptOverride (agents.*.systemPromptOverride), if non-blank,
	// replaces the whole generated prompt; only the bootstrap supplement
	// (Bootstrap Pending, Bootstrap Context Notice, BOOTSTRAP.md in full
	// bootstrap mode) is appended after a blank line. Such a prompt has no
	// cache boundary.
	SystemPromptOverride string

	ToolNames     []string
	ToolSummaries map[string]string // external summaries for non-core tools
	// NativeCommandGuidance lines (plugin guidance) go into Tooling, deduped.
	NativeCommandGuidance []string
	ApprovalUI            ApprovalUI

	Provider ProviderContribution

	SkillsPrompt string
	// SkillsHash, if non-zero, must be xxhash.Sum64String(SkillsPrompt).
	SkillsHash uint64

	MemoryEnabled   bool // the memory plugin is present and the context engine is legacy
	MemoryCitations bool // false renders "Citations are disabled…"

	ModelAliasLines []string
	UserTimezone    string
	WorkspaceNotes  []string
	DocsPath        string
	LocalSource     string
	Sandbox         SandboxInfo

	OwnerNumbers       []string
	OwnerDisplay       string // "raw" (default) or "hash"
	OwnerDisplaySecret string

	BootstrapMode             BootstrapMode
	BootstrapTruncationNotice string

	ReasoningTagHint        bool
	SourceReplyDeliveryMode string // "message_tool_only" disables Silent Replies
	SilentReplyPromptMode   string // "none" disables Silent Replies

	ContextFiles []ContextFile

	// Dynamic inputs.
	MessageChannelOptions string   // "" = DefaultMessageChannelOptions
	MessageToolHints      []string // channel plugins' extra message-tool lines
	TTSHint               string
	ExtraSystemPrompt     string
	Reactions             *ReactionGuidance
	HeartbeatPrompt       string
	Runtime               RuntimeInfo
	ReasoningLevel        string // default "off"
	DefaultThinkLevel     string // default "off"
}

// NativeApprovalChannels are the channels with a native approval UI even
// without an inline-buttons capability.
var NativeApprovalChannels = []string{"discord", "slack", "telegram"}

// ApprovalUIFor picks the exec-approval variant as OpenClaw does: native when
// the channel has inline buttons or a native approval capability, or is a
// known native-approval channel.
func ApprovalUIFor(channel string, capabilities []string) ApprovalUI {
	ch := strings.ToLower(strings.TrimSpace(channel))
	if ch == "" {
		return ApprovalCommand
	}
	for _, c := range capabilities {
		switch strings.ToLower(strings.TrimSpace(c)) {
		case "inlinebuttons", "nativeapprovals", "approvals":
			return ApprovalNative
		}
	}
	for _, n := range NativeApprovalChannels {
		if ch == n {
			return ApprovalNative
		}
	}
	return ApprovalCommand
}
