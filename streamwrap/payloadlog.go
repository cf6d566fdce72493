package streamwrap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/ocbench/ocbench/internal/redact"
	"github.com/ocbench/ocbench/llm"
)

// DefaultPayloadLogMaxBytes is the size past which the payload log rotates.
const DefaultPayloadLogMaxBytes = 64 << 20

// PayloadLogConfig configures a PayloadLog.
type PayloadLogConfig struct {
	// Path is the JSONL file (OpenClaw: $STATE/logs/anthropic-payload.jsonl).
	Path string
	// MaxBytes rotates the file before a record would take it past this
	// size: the full file is compressed with zstd to Path.<unix-nanos>.zst
	// and a new file is started. Zero means DefaultPayloadLogMaxBytes.
	MaxBytes int64
	// APIs limits logging to these model apis; empty logs every call.
	// OpenClaw logs anthropic-messages only.
	APIs []llm.API
	// RunID, SessionID, SessionKey and WorkspaceDir are copied into each
	// record.
	RunID, SessionID, SessionKey, WorkspaceDir string
	// Secrets are further values redacted wherever they appear (the
	// request's own key always is).
	Secrets []string
}

// PayloadLog writes one redacted JSONL record per model call, as OpenClaw's
// anthropic payload logger does (streamwrap.md §4.6): {runId, sessionId,
// sessionKey, provider, modelId, modelApi, workspaceDir, ts,
// stage:"request", payload, payloadDigest}. The payload is the request
// (system prompt, messages, tools, sampling options); API keys never
// appear: the request's key is not written, and package internal/redact
// replaces by [REDACTED] the request's key and Secrets wherever they
// appear (also JSON-escaped) and key-shaped tokens (sk-…, xai-…, AIza…,
// ghp_…, and the token after Bearer or Basic) in any text. payloadDigest is the SHA-256 of the
// redacted payload. It is safe for concurrent use.
type PayloadLog struct {
	mu   sync.Mutex
	cfg  PayloadLogConfig
	f    *os.File
	size int64
	buf  []byte
	red  []byte
	enc  *zstd.Encoder
	err  error
	// rd redacts for requests with key rdKey (rebuilt when it changes).
	rd    *redact.Redactor
	rdKey string
}

// OpenPayloadLog opens (appending to) or creates the log file.
func OpenPayloadLog(cfg PayloadLogConfig) (*PayloadLog, error) {
	if cfg.Path == "" {
		return nil, errors.New("streamwrap: payload log needs a path")
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultPayloadLogMaxBytes
	}
	l := &PayloadLog{cfg: cfg}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *PayloadLog) open() error {
	f, err := os.OpenFile(l.cfg.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Close closes the file.
func (l *PayloadLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if l.enc != nil {
		l.enc.Close()
	}
	return err
}

// Err returns the first write or rotation error, if any. Logging failures
// never fail a model call.
func (l *PayloadLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *PayloadLog) logs(api llm.API) bool {
	if len(l.cfg.APIs) == 0 {
		return true
	}
	for _, a := range l.cfg.APIs {
		if a == api {
			return true
		}
	}
	return false
}

// Wrap returns next with the request of every call logged before it is
// sent. Events are not touched.
func (l *PayloadLog) Wrap(next llm.StreamFunc) llm.StreamFunc {
	return func(ctx context.Context, req *llm.Request) (llm.Stream, error) {
		if l.logs(req.Model.API) {
			l.Record(req)
		}
		return next(ctx, req)
	}
}

// Record writes req's record.
func (l *PayloadLog) Record(req *llm.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	payload := appendPayload(l.buf[:0], req)
	if l.rd == nil || l.rdKey != req.APIKey {
		l.rd, l.rdKey = redact.New(append([]string{req.APIKey}, l.cfg.Secrets...)...), req.APIKey
	}
	l.red = l.rd.Append(l.red[:0], payload)
	l.buf = payload
	sum := sha256.Sum256(l.red)
	line := make([]byte, 0, len(l.red)+512)
	line = append(line, `{"runId":`...)
	line = llm.AppendJSONString(line, l.cfg.RunID)
	line = append(line, `,"sessionId":`...)
	line = llm.AppendJSONString(line, l.cfg.SessionID)
	line = append(line, `,"sessionKey":`...)
	line = llm.AppendJSONString(line, l.cfg.SessionKey)
	line = append(line, `,"provider":`...)
	line = llm.AppendJSONString(line, req.Model.Provider)
	line = append(line, `,"modelId":`...)
	line = llm.AppendJSONString(line, req.Model.ID)
	line = append(line, `,"modelApi":`...)
	line = llm.AppendJSONString(line, string(req.Model.API))
	line = append(line, `,"workspaceDir":`...)
	line = llm.AppendJSONString(line, l.cfg.WorkspaceDir)
	line = append(line, `,"ts":`...)
	line = llm.AppendJSONString(line, time.Now().UTC().Format(time.RFC3339Nano))
	line = append(line, `,"stage":"request","payload":`...)
	line = append(line, l.red...)
	line = append(line, `,"payloadDigest":"`...)
	line = hex.AppendEncode(line, sum[:])
	line = append(line, "\"}\n"...)
	if l.size > 0 && l.size+int64(len(line)) > l.cfg.MaxBytes {
		if err := l.rotate(); err != nil && l.err == nil {
			l.err = err
		}
		if l.f == nil {
			return
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil && l.err == nil {
		l.err = err
	}
}

// rotate compresses the current file to Path.<unix-nanos>.zst and starts
// an empty one.
func (l *PayloadLog) rotate() error {
	if err := l.f.Close(); err != nil {
		l.f = nil
		return err
	}
	l.f = nil
	tmp := l.cfg.Path + ".rotating"
	if err := os.Rename(l.cfg.Path, tmp); err != nil {
		return errors.Join(err, l.open())
	}
	err := compressFile(tmp, l.cfg.Path+"."+strconv.FormatInt(time.Now().UnixNano(), 10)+".zst", &l.enc)
	if err == nil {
		err = os.Remove(tmp)
	}
	return errors.Join(err, l.open())
}

func compressFile(src, dst string, enc **zstd.Encoder) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if *enc == nil {
		e, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1))
		if err != nil {
			out.Close()
			return err
		}
		*enc = e
	} else {
		(*enc).Reset(out)
	}
	if _, err := io.Copy(*enc, in); err != nil {
		out.Close()
		return fmt.Errorf("streamwrap: compress payload log: %w", err)
	}
	if err := (*enc).Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// appendPayload writes the request as the JSON payload of a record.
func appendPayload(dst []byte, req *llm.Request) []byte {
	dst = append(dst, `{"model":`...)
	dst = llm.AppendJSONString(dst, req.Model.ID)
	dst = append(dst, `,"system":`...)
	dst = llm.AppendJSONString(dst, req.System)
	dst = append(dst, `,"messages":[`...)
	for i := range req.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = req.Messages[i].AppendJSON(dst)
	}
	dst = append(dst, `],"tools":[`...)
	for i := range req.Tools {
		t := &req.Tools[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = llm.AppendJSONString(dst, t.Name)
		dst = append(dst, `,"description":`...)
		dst = llm.AppendJSONString(dst, t.Description)
		dst = append(dst, `,"parameters":`...)
		if len(t.Parameters) > 0 {
			dst = append(dst, t.Parameters...)
		} else {
			dst = append(dst, "{}"...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if req.MaxTokens > 0 {
		dst = append(dst, `,"maxTokens":`...)
		dst = strconv.AppendInt(dst, int64(req.MaxTokens), 10)
	}
	if req.Temperature != nil {
		dst = append(dst, `,"temperature":`...)
		dst = strconv.AppendFloat(dst, *req.Temperature, 'g', -1, 64)
	}
	if req.Reasoning != "" {
		dst = append(dst, `,"reasoning":`...)
		dst = llm.AppendJSONString(dst, req.Reasoning)
	}
	return append(dst, '}')
}
