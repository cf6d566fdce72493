// Command ocbench is the command line of the ocbench library: it parses
// flags, calls the packages that do the work and prints their results. It
// holds no logic of its own.
//
// Each subcommand lives in its own file and registers itself in commands
// from an init function, so that adding a command touches no other file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// command is one subcommand: run gets the arguments after the subcommand
// name and returns the process exit status.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	if _, dup := commands[name]; dup {
		panic("BUG: command registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ocbench <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-14s %s\n", n, commands[n].summary)
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand. Help, asked for with "help CMD", "CMD
// -h" or "CMD --help", goes to stdout with exit status 0, as Go's own
// tools do: the command is run with only -h and stdout for both outputs,
// so its flag set prints its usage with every flag.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "help":
		if len(rest) == 0 {
			usage(stdout)
			return 0
		}
		if len(rest) > 1 {
			fmt.Fprintf(stderr, "ocbench help: unexpected argument %q\n", rest[1])
			return 2
		}
		name, rest = rest[0], []string{"-h"}
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "ocbench: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	if wantsHelp(rest) {
		fmt.Fprintf(stdout, "ocbench %s: %s\n\n", name, c.summary)
		c.run([]string{"-h"}, stdout, stdout)
		return 0
	}
	return c.run(rest, stdout, stderr)
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// outputs opens a command's output files before any work, so that a bad
// path fails at once (exit 2) instead of after minutes of measuring. "-"
// is stdout, which only one output may claim.
type outputs struct {
	stdout  io.Writer
	claimed string // the flag that writes to stdout
	files   []*os.File
	err     error
}

// claimStdout records that flag writes to stdout.
func (o *outputs) claimStdout(flag string) {
	if o.err != nil {
		return
	}
	if o.claimed != "" {
		o.err = fmt.Errorf("%s and %s both write to stdout", o.claimed, flag)
		return
	}
	o.claimed = flag
}

// open returns the writer for flag's path: nil for none, stdout for "-",
// else the created file.
func (o *outputs) open(flag, path string) io.Writer {
	if path == "" || o.err != nil {
		return nil
	}
	if path == "-" {
		o.claimStdout(flag)
		return o.stdout
	}
	f, err := os.Create(path)
	if err != nil {
		o.err = fmt.Errorf("%s: %w", flag, err)
		return nil
	}
	o.files = append(o.files, f)
	return f
}

func (o *outputs) stdoutTaken() bool { return o.claimed != "" }

// closeAll closes every file, returning the first error; later calls do
// nothing.
func (o *outputs) closeAll() error {
	var first error
	for _, f := range o.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	o.files = nil
	return first
}

// checkOutDir fails unless dir is, or could be created as, a directory
// this process can write into, without creating it: a command that writes
// there only when something fails (fuzz --out) must not learn after hours
// that it cannot. The nearest existing ancestor is tried with a temporary
// file, removed at once.
func checkOutDir(dir string) error {
	if dir == "" {
		return errors.New("empty directory name")
	}
	d := filepath.Clean(dir)
	for {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return err
		}
		d = parent
	}
	f, err := os.CreateTemp(d, ".ocbench-write-check-*")
	if err != nil {
		return fmt.Errorf("%s is not writable: %w", d, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeTo writes with write to the file at path, or to stdout for "-".
func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// extraArgs refuses arguments left after the flags of a command that takes
// none, so that a mistyped flag (a missing dash) is not silently ignored.
func extraArgs(fs *flag.FlagSet, stderr io.Writer) bool {
	if fs.NArg() == 0 {
		return false
	}
	fmt.Fprintf(stderr, "ocbench %s: unexpected argument %q (this command takes flags only)\n", fs.Name(), fs.Arg(0))
	return true
}
