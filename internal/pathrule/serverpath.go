package pathrule

// ServerPATH is the PATH a server starts with unless its environment sets
// one: the sandbox sets it, and launch puts an interpreter's bin before it.
const ServerPATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
