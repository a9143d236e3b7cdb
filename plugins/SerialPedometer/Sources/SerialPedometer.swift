// The SerialPedometer plugin.
