// The GatewayControl module; see README.md for its role.
