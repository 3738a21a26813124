package supervisor_test

//lint:file-ignore SA1019 the relay must carry roots, sampling and logging, which the SDK marks deprecated for the stateless protocol

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// The npm reference servers under the default confinement (policy.Default:
// namespaces, seccomp default, cgroups, --net none) with only the grants
// each needs: node_modules --ro (npmPolicy) and a --rw data directory.
//
// The data directories belong to a plain user, as a user's own ~/notes
// would: 0700 and owned by a non-root uid/gid. As root (how these tests
// run) the server's dynamic uid reaches them only through the idmapped
// grant, which shows the owner as the server and writes as the owner; no
// chmod is needed. Run unprivileged, the directories are the caller's own
// and the user-namespace path maps the caller instead.

const (
	npmOwnerUID = 4242
	npmOwnerGID = 4343
)

// userDir makes base/name, 0700, owned by the plain user (when root).
func userDir(t *testing.T, base, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for fname, content := range files {
		p := filepath.Join(dir, fname)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		chownToUser(t, p)
	}
	chownToUser(t, dir)
	return dir
}

func chownToUser(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Lchown(path, npmOwnerUID, npmOwnerGID); err != nil {
		t.Fatal(err)
	}
}

// checkOwnedByUser asserts that path (as the host sees it) belongs to the
// plain user: what the server writes lands as the grant's owner.
func checkOwnedByUser(t *testing.T, path string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Errorf("on the host: %v", err)
		return
	}
	wantUID, wantGID := uint32(os.Getuid()), uint32(os.Getgid())
	if os.Geteuid() == 0 {
		wantUID, wantGID = npmOwnerUID, npmOwnerGID
	}
	if st.Uid != wantUID || st.Gid != wantGID {
		t.Errorf("on the host %s is owned by %d:%d, want the grant's owner %d:%d", path, st.Uid, st.Gid, wantUID, wantGID)
	}
}

// toolError calls a tool that must be refused and returns the tool error
// text; a JSON-RPC error (the relay's or a crash) fails the test.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := callTool(t, cs, name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v (want the server's own refusal as a tool error)", name, err)
	}
	if !res.IsError {
		t.Fatalf("tools/call %s %v succeeded: %s", name, args, toolText(t, res))
	}
	return toolText(t, res)
}

func TestConfinedNPMFilesystem(t *testing.T) {
	base := t.TempDir()
	dir := userDir(t, base, "notes", map[string]string{"notes.txt": "hello from disk\n"})
	// The same user's other directory, never granted.
	secret := "SECRET-" + strconv.Itoa(os.Getpid())
	sibling := userDir(t, base, "private", map[string]string{"secret.txt": secret + "\n"})
	link := filepath.Join(dir, "link-to-secret")
	if err := os.Symlink(filepath.Join(sibling, "secret.txt"), link); err != nil {
		t.Fatal(err)
	}
	chownToUser(t, link)

	// The server itself is told to serve both directories; the sandbox
	// grants only the first.
	pol := npmPolicy(t, "server-filesystem", dir, sibling)
	pol.ReadWrite = []string{dir}
	r := startRelay(t, pol)
	cs := r.sdkClient("", nil)

	// Inside the grant: list, read, write, edit, mkdir.
	if got := mustCallTool(t, cs, "list_directory", map[string]any{"path": dir}); !strings.Contains(got, "[FILE] notes.txt") {
		t.Errorf("list_directory %s: %q", dir, got)
	}
	if got := mustCallTool(t, cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}); !strings.Contains(got, "hello from disk") {
		t.Errorf("read_text_file: %q", got)
	}
	mustCallTool(t, cs, "write_file", map[string]any{"path": filepath.Join(dir, "new.txt"), "content": "written from the sandbox\n"})
	mustCallTool(t, cs, "edit_file", map[string]any{"path": filepath.Join(dir, "notes.txt"),
		"edits": []map[string]any{{"oldText": "hello from disk", "newText": "edited in the sandbox"}}})
	mustCallTool(t, cs, "create_directory", map[string]any{"path": filepath.Join(dir, "sub")})
	for name, want := range map[string]string{"new.txt": "written from the sandbox\n", "notes.txt": "edited in the sandbox\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("on the host %s holds %q (%v), want %q", name, b, err, want)
		}
	}
	for _, name := range []string{"new.txt", "notes.txt", "sub", "."} {
		checkOwnedByUser(t, filepath.Join(dir, name))
	}

	// Outside the grant, the server's own check refuses.
	if got := toolError(t, cs, "read_text_file", map[string]any{"path": "/etc/passwd"}); !strings.Contains(got, "Access denied") {
		t.Errorf("reading /etc/passwd: %q, want the server's access denial", got)
	}
	escaped := filepath.Join(base, "escaped.txt")
	toolError(t, cs, "write_file", map[string]any{"path": escaped, "content": "x"})
	if _, err := os.Lstat(escaped); err == nil {
		t.Errorf("%s was written outside the grant", escaped)
	}

	// The sibling is not in the sandbox at all: the server, told to serve
	// it, found no such directory at start-up, and the link planted in the
	// grant points at nothing inside. (Unconfined, the server would see the
	// target and refuse it as "symlink target outside allowed directories".)
	r.logs.waitFor(t, "Cannot access directory "+sibling)
	if got := mustCallTool(t, cs, "list_allowed_directories", nil); strings.Contains(got, sibling) || !strings.Contains(got, dir) {
		t.Errorf("list_allowed_directories: %q, want %s only", got, dir)
	}
	for _, args := range []map[string]any{
		{"path": filepath.Join(sibling, "secret.txt")},
		{"path": link},
	} {
		got := toolError(t, cs, "read_text_file", args)
		if strings.Contains(got, secret) || strings.Contains(got, "symlink target outside") {
			t.Errorf("read_text_file %s: %q; the secret must not even be visible inside", args["path"], got)
		}
		t.Logf("read_text_file %s refused: %s", args["path"], got)
	}
	toolError(t, cs, "write_file", map[string]any{"path": link, "content": "overwritten"})
	if b, err := os.ReadFile(filepath.Join(sibling, "secret.txt")); err != nil || string(b) != secret+"\n" {
		t.Errorf("the sibling's secret.txt now holds %q (%v)", b, err)
	}

	cs.Close()
	if out := r.end(); out.Failed || out.Restarts != 0 {
		t.Errorf("outcome %+v", out)
	}
}

// serverChildPid returns the pid of the server process the reaper (the
// sandbox's PID 1, pid on the host) started.
func serverChildPid(t *testing.T, reaper int) int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", reaper))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", reaper, task.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			pid, err := strconv.Atoi(f[0])
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("the sandbox's PID 1 (host pid %d) has no child", reaper)
	return 0
}

func TestConfinedNPMMemorySurvivesACrash(t *testing.T) {
	dir := userDir(t, t.TempDir(), "memory", nil)
	memFile := filepath.Join(dir, "memory.jsonl")
	pol := npmPolicy(t, "server-memory")
	pol.ReadWrite = []string{dir}
	pol.Env = []string{"MEMORY_FILE_PATH=" + memFile}
	r := startRelay(t, pol)
	started := r.waitEvent(supervisor.EventStarted)
	cs := r.sdkClient("", nil)

	mustCallTool(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "mcpsandbox", "entityType": "project", "observations": []string{"relays MCP"}},
		{"name": "node", "entityType": "runtime", "observations": []string{"runs the server"}},
	}})
	mustCallTool(t, cs, "create_relations", map[string]any{"relations": []map[string]any{
		{"from": "mcpsandbox", "to": "node", "relationType": "confines"},
	}})

	// node itself crashes (the sandbox's reaper stays and reports it).
	node := serverChildPid(t, started.Pid)
	if err := syscall.Kill(node, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if ex := r.waitEvent(supervisor.EventExited); ex.Reason != "killed by signal killed" {
		t.Errorf("exit reason %q", ex.Reason)
	}
	r.waitEvent(supervisor.EventReady)

	// Same host session, new node: the graph came back from the file.
	got := mustCallTool(t, cs, "read_graph", nil)
	for _, want := range []string{"relays MCP", "runs the server", "confines"} {
		if !strings.Contains(got, want) {
			t.Errorf("read_graph after the restart lacks %q: %s", want, got)
		}
	}
	mustCallTool(t, cs, "add_observations", map[string]any{"observations": []map[string]any{
		{"entityName": "mcpsandbox", "contents": []string{"restarted the server"}},
	}})
	b, err := os.ReadFile(memFile)
	if err != nil || !strings.Contains(string(b), "relays MCP") || !strings.Contains(string(b), "restarted the server") {
		t.Errorf("the host's %s holds %q (%v)", memFile, b, err)
	}
	checkOwnedByUser(t, memFile)

	cs.Close()
	if out := r.end(); out.Failed || out.Restarts != 1 {
		t.Errorf("outcome %+v", out)
	}
}

// everythingArgs are arguments for tools whose schema-derived minimum
// would not do: a call that must stay offline (--net none), quick, or
// check a known answer. Each has the text its answer must contain.
var everythingArgs = map[string]struct {
	args map[string]any
	want string
}{
	"echo":                           {map[string]any{"message": "hello from the sandbox"}, "hello from the sandbox"},
	"get-sum":                        {map[string]any{"a": 2, "b": 40}, "42"},
	"trigger-long-running-operation": {map[string]any{"duration": 0.1, "steps": 2}, "completed"},
	"trigger-sampling-request":       {map[string]any{"prompt": "write a haiku", "maxTokens": 20}, "sampled by the host"},
	"get-roots-list":                 {nil, "file:///srv/project"},
	"trigger-elicitation-request":    {nil, "Monica"},
	// A data URI: the default fetches from GitHub, and there is no network.
	"gzip-file-as-resource": {map[string]any{"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8gc2FuZGJveA==", "outputType": "resource"}, ""},
	"get-env":               {nil, `"HOME": "/sandbox"`},
}

// everythingTaskOnly are tools the server runs only as MCP tasks, which the
// Go SDK client does not speak: they answer, with the server's refusal.
var everythingTaskOnly = map[string]bool{"simulate-research-query": true}

// schemaArgs builds minimal valid arguments from a tool's input schema:
// every required property gets its first enum value, default, minimum, or a
// plain value of its type.
func schemaArgs(schema any) map[string]any {
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	args := map[string]any{}
	req, _ := s["required"].([]any)
	for _, name := range req {
		n, _ := name.(string)
		p, _ := props[n].(map[string]any)
		args[n] = schemaValue(p)
	}
	return args
}

func schemaValue(p map[string]any) any {
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if d, ok := p["default"]; ok {
		return d
	}
	switch p["type"] {
	case "number", "integer":
		if m, ok := p["minimum"]; ok {
			return m
		}
		return 1
	case "boolean":
		return true
	case "array":
		items, _ := p["items"].(map[string]any)
		return []any{schemaValue(items)}
	case "object":
		return schemaArgs(p)
	}
	switch p["format"] {
	case "email":
		return "user@example.com"
	case "uri":
		return "https://example.com"
	case "date":
		return "2000-01-01"
	}
	return "x"
}

// elicitAccept answers a form elicitation as a user filling in every field
// with its default or a valid value.
func elicitAccept(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	schema, _ := req.Params.RequestedSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	content := map[string]any{}
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if opts, ok := pm["oneOf"].([]any); ok && len(opts) > 0 {
			first, _ := opts[0].(map[string]any)
			content[name] = first["const"]
			continue
		}
		if items, ok := pm["items"].(map[string]any); ok {
			if anyOf, ok := items["anyOf"].([]any); ok && len(anyOf) > 0 {
				first, _ := anyOf[0].(map[string]any)
				content[name] = []any{first["const"]}
				continue
			}
		}
		content[name] = schemaValue(pm)
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

func TestConfinedNPMEverythingEveryToolAnswers(t *testing.T) {
	r := startRelay(t, npmPolicy(t, "server-everything", "stdio"))
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled by the host"}}, nil
		},
		ElicitationHandler: elicitAccept,
	})
	c.AddRoots(&mcp.Root{URI: "file:///srv/project", Name: "project"})
	cs := r.sdkClientWith(c, "")
	ctx := context.Background()

	noCrash := func(what string, err error) {
		t.Helper()
		var werr *jsonrpc.Error
		if errors.As(err, &werr) && (werr.Code == supervisor.CodeServerCrashed || werr.Code == supervisor.CodeServerStopped) {
			t.Fatalf("%s: %v: the server crashed under the sandbox", what, err)
		}
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tool := range tools.Tools {
		seen[tool.Name] = true
		t.Run("tool/"+tool.Name, func(t *testing.T) {
			table, fixed := everythingArgs[tool.Name]
			args := table.args
			if !fixed || args == nil {
				args = schemaArgs(tool.InputSchema)
			}
			res, err := callTool(t, cs, tool.Name, args)
			noCrash("tools/call "+tool.Name, err)
			if everythingTaskOnly[tool.Name] {
				switch {
				case err != nil:
					t.Logf("refused as a plain call, as expected: %v", err)
				case !res.IsError:
					t.Errorf("the task-only tool answered a plain call: %s", toolText(t, res))
				default:
					t.Logf("refused as a plain call, as expected: %s", toolText(t, res))
				}
				return
			}
			if err != nil {
				t.Fatalf("tools/call %s %v: %v", tool.Name, args, err)
			}
			if res.IsError {
				t.Fatalf("tools/call %s %v returned a tool error: %s", tool.Name, args, toolText(t, res))
			}
			if len(res.Content) == 0 && res.StructuredContent == nil {
				t.Errorf("tools/call %s: empty result", tool.Name)
			}
			if table.want != "" && !strings.Contains(toolText(t, res), table.want) {
				t.Errorf("tools/call %s: %q lacks %q", tool.Name, toolText(t, res), table.want)
			}
		})
	}
	// The tools whose answers come from the host must have been listed.
	for _, name := range []string{"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
		if !seen[name] {
			t.Errorf("tools/list lacks %s (it needs the client's handler)", name)
		}
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("prompts/list: %v", err)
	}
	promptArgs := map[string]map[string]string{
		"args-prompt":        {"city": "Paris"},
		"completable-prompt": {"department": "Engineering", "name": "Alice"},
		"resource-prompt":    {"resourceType": "Text", "resourceId": "1"},
	}
	for _, p := range prompts.Prompts {
		args := promptArgs[p.Name]
		for _, a := range p.Arguments {
			if _, ok := args[a.Name]; a.Required && !ok {
				t.Errorf("prompt %s needs argument %s: add it to promptArgs", p.Name, a.Name)
			}
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args})
		noCrash("prompts/get "+p.Name, err)
		if err != nil || len(got.Messages) == 0 {
			t.Errorf("prompts/get %s: %v %+v", p.Name, err, got)
		}
	}

	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	uris := []string{"demo://resource/dynamic/text/1", "demo://resource/dynamic/blob/2"}
	for _, res := range resources.Resources {
		uris = append(uris, res.URI)
	}
	for _, uri := range uris {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		noCrash("resources/read "+uri, err)
		if err != nil || len(rr.Contents) == 0 {
			t.Errorf("resources/read %s: %v", uri, err)
		}
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) == 0 {
		t.Errorf("resources/templates/list: %v", err)
	}

	cs.Close()
	if out := r.end(); out.Failed || out.Restarts != 0 {
		t.Errorf("outcome %+v", out)
	}
}
