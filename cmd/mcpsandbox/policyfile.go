package main

const policyUsage = "Start from the policy file FILE or the built-in policy NAME instead of the built-in chosen by the command (see mcpsandbox policy list); flags given beside it override its values, and --ro, --rw, --tmpfs and --env add to its lists. FILE has a / in it or ends in .yaml; its format is documented in docs/policy.md."
