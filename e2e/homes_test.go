package e2e

import _ "github.com/sessctl/sessctl/pkg/agent/all" // the agents' homes decode the clients' files
