// skiff-launcher: Skiff's launcher inside a KFP task Pod on a Kubernetes cluster with an S3 pipeline
// root. An init container copies this static binary into an emptyDir (`skiff-launcher copy DEST`);
// the main container's command is wrapped by it (`skiff-launcher run -- CMD ARG...`): it downloads
// the task's input artifacts from S3, runs the component's command with the S3 credentials taken out
// of its environment, and after a zero exit uploads the output artifacts, the output parameter files
// and the executor output, as SKIFF_LAUNCHER_PLAN (the LauncherPlan of
// src/workloads/pipelines/launcher.ts) says. Built by scripts/launcher.sh.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// version is set at build time (-X main.version=...) to the hash of the sources.
var version = "dev"

const usage = `usage:
  skiff-launcher --version
  skiff-launcher copy DEST
  skiff-launcher run -- CMD [ARG...]`

func main() {
	os.Exit(launch(os.Args[1:]))
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "skiff-launcher: "+format+"\n", args...)
}

// failed prints an error as one line and gives the exit code 1.
func failed(err error) int {
	say("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	return 1
}

func launch(args []string) int {
	if len(args) == 0 {
		say("no subcommand\n%s", usage)
		return 1
	}
	switch args[0] {
	case "--version", "version":
		fmt.Printf("skiff-launcher %s\n", version)
		return 0
	case "copy":
		if len(args) != 2 || args[1] == "" {
			say("copy takes one argument, the destination file\n%s", usage)
			return 1
		}
		if err := copySelf(args[1]); err != nil {
			return failed(err)
		}
		return 0
	case "run":
		cmd := args[1:]
		if len(cmd) > 0 && cmd[0] == "--" {
			cmd = cmd[1:]
		}
		if len(cmd) == 0 {
			say("run: no command after --\n%s", usage)
			return 1
		}
		return run(cmd)
	}
	say("unknown subcommand %q\n%s", args[0], usage)
	return 1
}

// copySelf copies this executable to dest (mode 0755) through a temporary file in dest's folder.
func copySelf(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("copy: finding its own executable: %v", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("copy: %v", err)
	}
	defer in.Close()
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("copy: %v", err)
	}
	tmp, err := os.CreateTemp(dir, ".skiff-launcher-*")
	if err != nil {
		return fmt.Errorf("copy: %v", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("copy: writing %s: %v", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return fmt.Errorf("copy: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("copy: %v", err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("copy: %v", err)
	}
	return nil
}

// ChildEnv is the environment less the launcher's own variables, the S3 credentials among them.
func ChildEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "SKIFF_LAUNCHER_") || strings.HasPrefix(kv, "SKIFF_S3_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// storeFromEnv is the S3 endpoint as SKIFF_S3_* say.
func storeFromEnv() (*Store, error) {
	endpoint := os.Getenv("SKIFF_S3_ENDPOINT")
	if endpoint == "" {
		return nil, errors.New("SKIFF_S3_ENDPOINT is not set (the S3 endpoint, http://host:port)")
	}
	region := os.Getenv("SKIFF_S3_REGION")
	if region == "" {
		region = "us-east-1"
	}
	key, secret := os.Getenv("SKIFF_S3_ACCESS_KEY_ID"), os.Getenv("SKIFF_S3_SECRET_ACCESS_KEY")
	if key == "" {
		return nil, errors.New("SKIFF_S3_ACCESS_KEY_ID is not set")
	}
	if secret == "" {
		return nil, errors.New("SKIFF_S3_SECRET_ACCESS_KEY is not set")
	}
	return NewStore(endpoint, region, key, secret)
}

var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// signals: while the command runs, each signal goes to it; before and after it, a signal ends the
// launcher (128+signal), as it would a process without handlers that is not PID 1 in its container.
type signals struct {
	mu    sync.Mutex
	child *os.Process
}

func (s *signals) start() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, forwarded...)
	go func() {
		for sig := range ch {
			s.mu.Lock()
			child := s.child
			s.mu.Unlock()
			if child != nil {
				_ = child.Signal(sig)
				continue
			}
			n := int(sig.(syscall.Signal))
			say("stopped by %s", signalName(sig))
			os.Exit(128 + n)
		}
	}()
}

func (s *signals) set(p *os.Process) {
	s.mu.Lock()
	s.child = p
	s.mu.Unlock()
}

func signalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		switch s {
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGINT:
			return "SIGINT"
		case syscall.SIGHUP:
			return "SIGHUP"
		case syscall.SIGQUIT:
			return "SIGQUIT"
		}
	}
	return sig.String()
}

func plural(n int, one string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", one)
	}
	return fmt.Sprintf("%d %ss", n, one)
}

func run(argv []string) int {
	var sigs signals
	sigs.start()
	ctx := context.Background()

	plan, err := ParsePlan(os.Getenv("SKIFF_LAUNCHER_PLAN"))
	if err != nil {
		return failed(err)
	}
	store, err := storeFromEnv()
	if err != nil {
		return failed(err)
	}
	root, _ := ParseS3URI(plan.PipelineRoot)
	if err := store.CheckBucket(ctx, root.Bucket); err != nil {
		return failed(err)
	}
	for _, d := range plan.Downloads {
		n, err := store.Download(ctx, d.URI, d.Path)
		if errors.Is(err, errNotFound) {
			return failed(fmt.Errorf("its input artifact %s: %s does not exist", d.Name, d.URI))
		}
		if err != nil {
			return failed(fmt.Errorf("downloading its input artifact %s (%s): %v", d.Name, d.URI, err))
		}
		say("downloaded input artifact %s (%s)", d.Name, plural(n, "object"))
	}
	for _, p := range plan.OutputPaths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return failed(fmt.Errorf("making the folder of its output %s: %v", p, err))
		}
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = ChildEnv(os.Environ())
	// a signal that comes while the command starts waits for it, and is passed on to it
	sigs.mu.Lock()
	err = cmd.Start()
	if err == nil {
		sigs.child = cmd.Process
	}
	sigs.mu.Unlock()
	if err != nil {
		say("starting %s: %v", argv[0], err)
		return 127
	}
	say("started %s", argv[0])
	ws, err := wait(cmd)
	sigs.set(nil)
	if err != nil {
		return failed(fmt.Errorf("waiting for %s: %v", argv[0], err))
	}
	if ws.Signaled() {
		say("%s was killed by %s; nothing uploaded", argv[0], signalName(ws.Signal()))
		return 128 + int(ws.Signal())
	}
	if code := ws.ExitStatus(); code != 0 {
		say("%s exited with %d; nothing uploaded", argv[0], code)
		return code
	}

	if err := upload(ctx, store, plan); err != nil {
		return failed(err)
	}
	return 0
}

// wait waits for the command. As the container's PID 1 (the launcher is the main container's
// command), the processes the command leaves behind become the launcher's children: they are reaped
// as they exit, so that none stays a zombie, until the command itself exits.
func wait(cmd *exec.Cmd) (syscall.WaitStatus, error) {
	if os.Getpid() != 1 {
		err := cmd.Wait()
		var exit *exec.ExitError
		if err == nil || errors.As(err, &exit) {
			return cmd.ProcessState.Sys().(syscall.WaitStatus), nil
		}
		return 0, err
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if pid == cmd.Process.Pid {
			return ws, nil
		}
	}
}

// upload: every output artifact from where the component wrote it, then the output parameter
// files, then the executor output file, as PodLauncher.upload does.
func upload(ctx context.Context, store *Store, plan *Plan) error {
	var fromExecutor map[string][]Artifact
	text, err := os.ReadFile(plan.ExecutorOutput.Path)
	haveOutput := err == nil
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading its executor output %s: %v", plan.ExecutorOutput.Path, err)
	default:
		if fromExecutor, err = ExecutorOutputArtifacts(text); err != nil {
			return fmt.Errorf("its executor output %s: %v", plan.ExecutorOutput.Path, err)
		}
	}
	produced := Produced(plan.Artifacts, fromExecutor)
	names := make([]string, 0, len(produced))
	for n := range produced {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, a := range produced[name] {
			if _, ok := ParseS3URI(a.URI); !ok {
				continue
			}
			local, _ := a.LocalPath()
			n, err := store.Upload(ctx, local, a.URI)
			if err != nil {
				return fmt.Errorf("uploading its output artifact %s to %s: %v", name, a.URI, err)
			}
			if n > 0 {
				say("uploaded output artifact %s (%s)", name, plural(n, "object"))
			}
		}
	}
	for _, f := range plan.ParameterFiles {
		if _, err := store.Upload(ctx, f.Path, f.URI); err != nil {
			return fmt.Errorf("uploading its output parameter file %s to %s: %v", f.Path, f.URI, err)
		}
	}
	if haveOutput {
		if _, err := store.Upload(ctx, plan.ExecutorOutput.Path, plan.ExecutorOutput.URI); err != nil {
			return fmt.Errorf("uploading its executor output to %s: %v", plan.ExecutorOutput.URI, err)
		}
	}
	return nil
}
