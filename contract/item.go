package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gowebpki/jcs"
)

// Kind is the kind of one part of a contract.
type Kind string

const (
	Tool             Kind = "tool"
	Prompt           Kind = "prompt"
	Resource         Kind = "resource"
	ResourceTemplate Kind = "resourceTemplate"
	Instructions     Kind = "instructions"
	ServerInfo       Kind = "serverInfo"
	Capabilities     Kind = "capabilities"
)

// Kinds is every kind, in the order diffs and listings show them.
var Kinds = []Kind{Tool, Prompt, Resource, ResourceTemplate, Instructions, ServerInfo, Capabilities}

// Keyed reports whether items of the kind have a key (a name or uri); the
// three server-wide kinds have none.
func (k Kind) Keyed() bool {
	switch k {
	case Tool, Prompt, Resource, ResourceTemplate:
		return true
	}
	return false
}

func (k Kind) valid() bool { return slices.Contains(Kinds, k) }

// Item is one part of a contract as pinned.
type Item struct {
	Kind Kind
	Key  string          // tool/prompt name, resource uri, template uriTemplate; "" for the three server-wide kinds
	Text json.RawMessage // RFC 8785 canonical JSON of the contract fields only
	Hash string          // "sha256:" + lowercase hex of sha256(Text)
}

// Name is how users name the item on the command line (see ItemName).
func (it Item) Name() string { return ItemName(it.Kind, it.Key) }

// NewItem canonicalises text (a lock's stored text, an override) and hashes
// it. The text is taken as the item's contract: fields outside the contract
// are dropped, as FromList drops them, so an edited lock cannot smuggle in
// what a server could not. A keyed item's text must name its key.
func NewItem(kind Kind, key string, text []byte) (Item, error) {
	if !kind.valid() {
		return Item{}, fmt.Errorf("unknown kind %q (want one of %s)", kind, kindList())
	}
	if kind.Keyed() != (key != "") {
		if key == "" {
			return Item{}, fmt.Errorf("a %s needs a key", kind)
		}
		return Item{}, fmt.Errorf("%s has no key (got %q)", kind, key)
	}
	canon, err := contractText(kind, text)
	if err != nil {
		return Item{}, err
	}
	if kind.Keyed() {
		got, err := keyOf(kind, canon)
		if err != nil {
			return Item{}, err
		}
		if got != key {
			return Item{}, fmt.Errorf("%s %q: its text names %q", kind, key, got)
		}
	}
	return Item{Kind: kind, Key: key, Text: canon, Hash: Hash(canon)}, nil
}

// Hash is "sha256:" and the lowercase hex of the SHA-256 of text.
func Hash(text []byte) string {
	sum := sha256.Sum256(text)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ItemName is how users name an item on the command line: "tool:write_file",
// "resource:file:///a", and plain "instructions", "serverInfo", "capabilities".
func ItemName(kind Kind, key string) string {
	if !kind.Keyed() {
		return string(kind)
	}
	return string(kind) + ":" + key
}

// ParseItemName reads what ItemName writes. A key may hold colons (a uri):
// only the first one separates.
func ParseItemName(s string) (Kind, string, error) {
	name, key, hasKey := strings.Cut(s, ":")
	kind := Kind(name)
	if !kind.valid() {
		return "", "", fmt.Errorf("%q names no kind of item: write KIND:KEY (tool:NAME, prompt:NAME, resource:URI, resourceTemplate:URITEMPLATE) or instructions, serverInfo, capabilities", s)
	}
	switch {
	case kind.Keyed() && (!hasKey || key == ""):
		return "", "", fmt.Errorf("%q: a %s needs its key: write %s:KEY", s, kind, kind)
	case !kind.Keyed() && hasKey:
		return "", "", fmt.Errorf("%q: %s has no key: write %s alone", s, kind, kind)
	}
	return kind, key, nil
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Order compares two items' places as diffs and the lock show them: by
// kind, then key (-1, 0 or +1, as slices.SortFunc wants).
func Order(ak Kind, akey string, bk Kind, bkey string) int {
	if ak != bk {
		return slices.Index(Kinds, ak) - slices.Index(Kinds, bk)
	}
	return strings.Compare(akey, bkey)
}

// Less reports whether a's place comes before b's (see Order).
func Less(ak Kind, akey string, bk Kind, bkey string) bool { return Order(ak, akey, bk, bkey) < 0 }

// SortItems sorts items by kind, then key.
func SortItems(items []Item) {
	slices.SortFunc(items, func(a, b Item) int { return Order(a.Kind, a.Key, b.Kind, b.Key) })
}

// canonical is RFC 8785's byte form of a JSON text.
func canonical(text []byte) (json.RawMessage, error) {
	out, err := jcs.Transform(text)
	if err != nil {
		return nil, fmt.Errorf("not canonicalisable JSON: %w", err)
	}
	return out, nil
}
