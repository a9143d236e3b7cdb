#pragma once
// libmosquitto's types and constants only. No library is linked (the module map has no `link`):
// the mqtt sink opens libmosquitto.so.1 with dlopen(3) when it starts
// (plugins/MQTTBroker/Sources/MosquittoLibrary.swift), so a gateway without that sink never maps
// libmosquitto or the TLS libraries it pulls in. Every call goes through a pointer that dlsym(3)
// resolved.
#include <mosquitto.h>
#include <mqtt_protocol.h>

// The types of the entry points, taken from mosquitto.h's own prototypes so that a pointer's type
// can never disagree with the header. __typeof__ does not evaluate its operand: no reference to
// the symbol is emitted.
typedef __typeof__(&mosquitto_lib_init) hg_mosquitto_lib_init_fn;
typedef __typeof__(&mosquitto_new) hg_mosquitto_new_fn;
typedef __typeof__(&mosquitto_destroy) hg_mosquitto_destroy_fn;
typedef __typeof__(&mosquitto_int_option) hg_mosquitto_int_option_fn;
typedef __typeof__(&mosquitto_will_set_v5) hg_mosquitto_will_set_v5_fn;
typedef __typeof__(&mosquitto_username_pw_set) hg_mosquitto_username_pw_set_fn;
typedef __typeof__(&mosquitto_tls_set) hg_mosquitto_tls_set_fn;
typedef __typeof__(&mosquitto_reconnect_delay_set) hg_mosquitto_reconnect_delay_set_fn;
typedef __typeof__(&mosquitto_connect_async) hg_mosquitto_connect_async_fn;
typedef __typeof__(&mosquitto_disconnect) hg_mosquitto_disconnect_fn;
typedef __typeof__(&mosquitto_loop_start) hg_mosquitto_loop_start_fn;
typedef __typeof__(&mosquitto_loop_stop) hg_mosquitto_loop_stop_fn;
typedef __typeof__(&mosquitto_publish_v5) hg_mosquitto_publish_v5_fn;
typedef __typeof__(&mosquitto_connect_callback_set) hg_mosquitto_connect_callback_set_fn;
typedef __typeof__(&mosquitto_disconnect_callback_set) hg_mosquitto_disconnect_callback_set_fn;
typedef __typeof__(&mosquitto_publish_v5_callback_set) hg_mosquitto_publish_v5_callback_set_fn;
typedef __typeof__(&mosquitto_log_callback_set) hg_mosquitto_log_callback_set_fn;
typedef __typeof__(&mosquitto_property_add_string_pair) hg_mosquitto_property_add_string_pair_fn;
typedef __typeof__(&mosquitto_property_free_all) hg_mosquitto_property_free_all_fn;
typedef __typeof__(&mosquitto_strerror) hg_mosquitto_strerror_fn;
typedef __typeof__(&mosquitto_connack_string) hg_mosquitto_connack_string_fn;
typedef __typeof__(&mosquitto_reason_string) hg_mosquitto_reason_string_fn;
