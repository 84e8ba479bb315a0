/* protocol.h: the one definition of the control protocol's interface,
 * method, error and field names, used by both atimed and atimectl.
 * Transport: JSON objects over a SOCK_STREAM Unix socket, each followed by a
 * NUL byte, in Varlink's request/reply/error form. */
#pragma once

#define ATIMED_SOCKET_DEFAULT RUNDIR "/atimed/io.atimed"
#define ATIMED_SOCKET_ENV "ATIMED_SOCKET"

/* Version of the JSON documents (status, history, ...); bumped on any
 * incompatible change of a field's meaning. */
#define ATIMED_SCHEMA_VERSION 1

#define VARLINK_SERVICE_INTERFACE "org.varlink.service"
#define ATIMED_INTERFACE "io.atimed"

/* Message envelope */
#define VL_METHOD "method"
#define VL_PARAMETERS "parameters"
#define VL_ERROR "error"
#define VL_ONEWAY "oneway"
#define VL_MORE "more"
#define VL_UPGRADE "upgrade"
#define VL_CONTINUES "continues"

/* Methods */
#define METHOD_GET_INFO "org.varlink.service.GetInfo"
#define METHOD_GET_INTERFACE_DESCRIPTION "org.varlink.service.GetInterfaceDescription"
#define METHOD_GET_STATUS "io.atimed.GetStatus"

/* Errors: Varlink's own, then ours */
#define ERROR_INTERFACE_NOT_FOUND "org.varlink.service.InterfaceNotFound"
#define ERROR_METHOD_NOT_FOUND "org.varlink.service.MethodNotFound"
#define ERROR_METHOD_NOT_IMPLEMENTED "org.varlink.service.MethodNotImplemented"
#define ERROR_INVALID_PARAMETER "org.varlink.service.InvalidParameter"
#define ERROR_PERMISSION_DENIED "org.varlink.service.PermissionDenied"
#define ERROR_NO_SUCH_MOUNT "io.atimed.NoSuchMount"
#define ERROR_INVALID_REQUEST "io.atimed.InvalidRequest"
#define ERROR_REQUEST_TOO_LARGE "io.atimed.RequestTooLarge"
#define ERROR_TOO_MANY_CLIENTS "io.atimed.TooManyClients"
#define ERROR_INTERNAL "io.atimed.InternalError"

/* Error parameters */
#define P_METHOD "method"
#define P_PARAMETER "parameter"
#define P_INTERFACE "interface"
#define P_REASON "reason"
#define P_LIMIT "limit"

/* GetInfo reply (Varlink's fixed names) */
#define F_VENDOR "vendor"
#define F_PRODUCT "product"
#define F_VERSION "version"
#define F_URL "url"
#define F_INTERFACES "interfaces"
#define F_DESCRIPTION "description"

/* GetStatus */
#define F_SCHEMA_VERSION "schema_version"
#define F_HOSTNAME "hostname"
#define F_STARTED_AT "started_at"
#define F_UPTIME_S "uptime_s"
#define F_MOUNTS "mounts"
#define F_MOUNT_ID "mount_id"
#define F_TARGET "target"
#define F_SOURCE "source"
#define F_FSTYPE "fstype"
#define F_ROOT "root"
#define F_DEVICE "device"
#define F_MAJOR "major"
#define F_MINOR "minor"
#define F_ATIME "atime"
#define F_NODIRATIME "nodiratime"
#define F_LAZYTIME "lazytime"
#define F_READ_ONLY "read_only"
#define F_OPTIONS "options"
#define F_SUPER_OPTIONS "super_options"

/* Values of F_ATIME */
#define ATIME_STRICT_NAME "strictatime"
#define ATIME_RELATIME_NAME "relatime"
#define ATIME_NOATIME_NAME "noatime"
