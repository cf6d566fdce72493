package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ocbench/ocbench/prompt"
	"github.com/ocbench/ocbench/tokenize"
)

func init() {
	register("prompt", "print the assembled system prompt or its context report", runPrompt)
}

func runPrompt(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("prompt", flag.ContinueOnError)
	fl.SetOutput(stderr)
	workspace := fl.String("workspace", "", "workspace directory (default: the built-in sample workspace)")
	modeName := fl.String("mode", "full", "prompt mode: full, minimal or none")
	asJSON := fl.Bool("json", false, "print JSON")
	report := fl.Bool("report", false, "print the context report (/context list) instead of the prompt")
	encName := fl.String("encoding", "o200k_base", "token encoding for the report: o200k_base or cl100k_base")
	channel := fl.String("channel", "", "message channel for the runtime line (e.g. telegram)")
	trigger := fl.String("trigger", "user", "what started the run: user, heartbeat, cron, …")
	warn := fl.String("truncation-warning", "once", "bootstrap truncation warning: off, once or always")
	maxChars := fl.Int("bootstrap-max-chars", prompt.DefaultBootstrapMaxChars, "per-file bootstrap budget (chars)")
	totalChars := fl.Int("bootstrap-total-max-chars", prompt.DefaultBootstrapTotalMaxChars, "total bootstrap budget (chars)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if extraArgs(fl, stderr) {
		return 2
	}
	mode, err := prompt.ParseMode(*modeName)
	if err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 2
	}
	wm, err := prompt.ParseWarningMode(*warn)
	if err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 2
	}
	enc, err := tokenize.ParseEncoding(*encName)
	if err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 2
	}
	dir := *workspace
	if dir == "" {
		d, err := fixedSampleDir()
		if err != nil {
			fmt.Fprintln(stderr, "ocbench prompt:", err)
			return 1
		}
		dir = d
	}
	cfg := prompt.SampleConfig()
	cfg.Base.Mode, cfg.ModeSet = mode, true
	cfg.Base.Runtime.Channel = *channel
	cfg.Trigger = *trigger
	cfg.Warning = wm
	cfg.Budget = prompt.Budget{MaxChars: *maxChars, TotalMaxChars: *totalChars}
	res, err := prompt.Resolve(cfg, dir)
	if err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 1
	}
	if !*report {
		out, lay, err := prompt.AppendPrompt(nil, &res.Params)
		if err != nil {
			fmt.Fprintln(stderr, "ocbench prompt:", err)
			return 1
		}
		if *asJSON {
			return writeJSON(stdout, stderr, map[string]any{
				"mode": mode.String(), "workspace": res.Workspace, "prompt": string(out),
				"bytes": lay.Len, "boundaryByte": lay.Marker, "stableBytes": lay.StableLen,
				"stablePrefixHash": fmt.Sprintf("%016x", lay.PrefixHash), "stableKey": fmt.Sprintf("%016x", lay.Key),
				"warnings": res.Warnings,
			})
		}
		out = append(out, '\n')
		if _, err := stdout.Write(out); err != nil {
			return 1
		}
		return 0
	}
	counter, err := tokenize.Get(enc)
	if err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 1
	}
	rep, _, err := prompt.BuildReport(res, counter)
	if err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 1
	}
	if *asJSON {
		return writeJSON(stdout, stderr, rep)
	}
	if err := rep.WriteText(stdout); err != nil {
		return 1
	}
	return 0
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintln(stderr, "ocbench prompt:", err)
		return 1
	}
	return 0
}

// sampleDirName is where the built-in sample workspace is written, under
// the temporary directory. The workspace path is part of the prompt (the
// workspace section, the skills' locations), so a fixed path keeps the
// stable-prefix hash of the sample the same on every run and machine.
const sampleDirName = "ocbench-sample-workspace"

// fixedSampleDir writes the sample workspace at its fixed path, exactly:
// files that differ are rewritten, anything that is not part of the sample
// is removed. Writes go through an os.Root, so a symlink planted under the
// directory cannot redirect them, and the directory itself must not be a
// symlink.
func fixedSampleDir() (string, error) {
	dir := filepath.Join(os.TempDir(), sampleDirName)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if st, err := os.Lstat(dir); err != nil {
		return "", err
	} else if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory (a symlink?); remove it", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	sample := prompt.SampleWorkspace()
	want := map[string]bool{".": true}
	err = fs.WalkDir(sample, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "." {
			return err
		}
		want[path] = true
		if d.IsDir() {
			if err := root.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			return nil
		}
		b, err := fs.ReadFile(sample, path)
		if err != nil {
			return err
		}
		if have, err := root.ReadFile(path); err == nil && bytes.Equal(have, b) {
			return nil
		}
		// Written aside and renamed into place: a run reading the sample
		// at the same time sees the old file or the new one, never half.
		tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
		if err := root.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return root.Rename(tmp, path)
	})
	if err != nil {
		return "", err
	}
	var extra []string
	_ = fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !want[path] {
			extra = append(extra, path)
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	for _, p := range extra {
		if err := root.RemoveAll(p); err != nil {
			return "", err
		}
	}
	return dir, nil
}
