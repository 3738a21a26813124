package config

import (
	"strconv"

	"github.com/goccy/go-yaml/ast"
)

// User is one who may connect to a server: a user name ("alice"), a
// numeric uid (1000 or "1000"), or "*", any uid. Exactly one holds: Any,
// else Name (UID -1), else UID.
type User struct {
	Name string
	UID  int
	Any  bool
}

func (u User) String() string {
	switch {
	case u.Any:
		return "*"
	case u.Name != "":
		return u.Name
	}
	return strconv.Itoa(u.UID)
}

// Allows reports whether a peer with uid, whose user name is name ("" when
// it has none), is u.
func (u User) Allows(uid int, name string) bool {
	switch {
	case u.Any:
		return true
	case u.Name != "":
		return name != "" && name == u.Name
	}
	return uid == u.UID
}

const usersExample = `e.g. "users": ["alice", 1001, "*"]`

// users reads a users list: names, uids or "*".
func (r *reader) users(kv *ast.MappingValueNode) ([]User, error) {
	seq, ok := unwrap(kv.Value).(*ast.SequenceNode)
	if !ok {
		return nil, r.fail(kv.Value, "users must be a list of user names, uids or \"*\", not "+kind(kv.Value), usersExample)
	}
	var users []User
	for _, item := range seq.Values {
		u, err := r.user(item)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}

func (r *reader) user(n ast.Node) (User, error) {
	if i, ok := unwrap(n).(*ast.IntegerNode); ok {
		return r.uid(n, i.Token.Value)
	}
	s, ok := str(n)
	if !ok {
		return User{}, r.fail(n, "a user is a user name, a uid or \"*\", not "+kind(n), usersExample)
	}
	switch {
	case s == "*":
		return User{UID: -1, Any: true}, nil
	case s != "" && s[0] >= '0' && s[0] <= '9':
		return r.uid(n, s)
	case !validUserName(s):
		return User{}, r.fail(n, strconv.Quote(s)+" is no user name", "use the name as in /etc/passwd (letters, digits, . _ -), a uid, or \"*\" for anyone")
	}
	return User{Name: s, UID: -1}, nil
}

func (r *reader) uid(n ast.Node, text string) (User, error) {
	uid, err := strconv.ParseUint(text, 10, 31)
	if err != nil {
		return User{}, r.fail(n, strconv.Quote(text)+" is no uid", "a uid is a whole number from 0, e.g. 1000")
	}
	return User{UID: int(uid)}, nil
}

// validUserName: what useradd accepts, and a trailing $ (Samba machines).
func validUserName(s string) bool {
	if s == "" || len(s) > 256 || s[0] == '-' {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '$' && i == len(s)-1) {
			return false
		}
	}
	return true
}
