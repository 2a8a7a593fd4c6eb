"""Golden bytes for CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), assembled by hand from the JSON schemas
(one comment per field, never produced by the codec), in a non-flexible (v1) and a flexible (v2+) version.
The conventions are test_golden.py's: correlation_id 7, client_id "cli"."""

from __future__ import annotations

from protocol.messages.create_acls import AclCreation, AclCreationResult, CreateAclsRequest, CreateAclsResponse
from protocol.messages.delete_acls import (
    DeleteAclsFilter,
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)
from protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)
from tests.protocol.test_golden import check_request, check_response, header


def test_describe_acls_v1_request_golden() -> None:
    body = DescribeAclsRequest(
        resource_type_filter=2,
        resource_name_filter=None,
        pattern_type_filter=2,
        principal_filter="User:a",
        host_filter=None,
        operation=1,
        permission_type=3,
    )
    expected = (
        b"\x00\x1d"  # request_api_key = 29 (DescribeAcls)
        b"\x00\x01"  # request_api_version = 1 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x02"  # resource_type_filter = 2 (TOPIC)
        b"\xff\xff"  # resource_name_filter = null
        b"\x02"  # pattern_type_filter = 2 (MATCH, v1+)
        b"\x00\x06User:a"  # principal_filter = "User:a"
        b"\xff\xff"  # host_filter = null
        b"\x01"  # operation = 1 (ANY)
        b"\x03"  # permission_type = 3 (ALLOW)
    )
    check_request(header(29, 1), body, expected)


def test_describe_acls_v2_response_golden() -> None:
    body = DescribeAclsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        resources=[
            DescribeAclsResource(
                resource_type=2,
                resource_name="t",
                pattern_type=3,
                acls=[AclDescription(principal="User:a", host="*", operation=3, permission_type=3)],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null (compact)
        b"\x02"  # resources: compact array of 1
        b"\x02"  # resources[0].resource_type = 2 (TOPIC)
        b"\x02t"  # resources[0].resource_name = "t"
        b"\x03"  # resources[0].pattern_type = 3 (LITERAL)
        b"\x02"  # resources[0].acls: compact array of 1
        b"\x07User:a"  # acls[0].principal = "User:a"
        b"\x02*"  # acls[0].host = "*"
        b"\x03"  # acls[0].operation = 3 (READ)
        b"\x03"  # acls[0].permission_type = 3 (ALLOW)
        b"\x00"  # acls[0] tagged fields: none
        b"\x00"  # resources[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(29, 2, body, expected)


def test_create_acls_v2_request_golden() -> None:
    body = CreateAclsRequest(
        creations=[
            AclCreation(
                resource_type=3,
                resource_name="g",
                resource_pattern_type=4,
                principal="User:*",
                host="*",
                operation=2,
                permission_type=2,
            )
        ]
    )
    expected = (
        b"\x00\x1e"  # request_api_key = 30 (CreateAcls)
        b"\x00\x02"  # request_api_version = 2 (flexible from v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # creations: compact array of 1
        b"\x03"  # creations[0].resource_type = 3 (GROUP)
        b"\x02g"  # creations[0].resource_name = "g"
        b"\x04"  # creations[0].resource_pattern_type = 4 (PREFIXED)
        b"\x07User:*"  # creations[0].principal = "User:*"
        b"\x02*"  # creations[0].host = "*"
        b"\x02"  # creations[0].operation = 2 (ALL)
        b"\x02"  # creations[0].permission_type = 2 (DENY)
        b"\x00"  # creations[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(30, 2), body, expected)


def test_create_acls_v1_response_golden() -> None:
    body = CreateAclsResponse(
        throttle_time_ms=0,
        results=[
            AclCreationResult(error_code=0, error_message=""),
            AclCreationResult(error_code=42, error_message="x"),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00\x00\x02"  # results: array of 2
        b"\x00\x00"  # results[0].error_code = 0
        b"\x00\x00"  # results[0].error_message = ""
        b"\x00\x2a"  # results[1].error_code = 42 (INVALID_REQUEST)
        b"\x00\x01x"  # results[1].error_message = "x"
    )
    check_response(30, 1, body, expected)


def test_delete_acls_v3_request_golden() -> None:
    body = DeleteAclsRequest(
        filters=[
            DeleteAclsFilter(
                resource_type_filter=1,
                resource_name_filter=None,
                pattern_type_filter=1,
                principal_filter=None,
                host_filter="*",
                operation=1,
                permission_type=1,
            )
        ]
    )
    expected = (
        b"\x00\x1f"  # request_api_key = 31 (DeleteAcls)
        b"\x00\x03"  # request_api_version = 3 (flexible from v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # filters: compact array of 1
        b"\x01"  # filters[0].resource_type_filter = 1 (ANY)
        b"\x00"  # filters[0].resource_name_filter = null
        b"\x01"  # filters[0].pattern_type_filter = 1 (ANY)
        b"\x00"  # filters[0].principal_filter = null
        b"\x02*"  # filters[0].host_filter = "*"
        b"\x01"  # filters[0].operation = 1 (ANY)
        b"\x01"  # filters[0].permission_type = 1 (ANY)
        b"\x00"  # filters[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(31, 3), body, expected)


def test_delete_acls_v1_response_golden() -> None:
    body = DeleteAclsResponse(
        throttle_time_ms=0,
        filter_results=[
            DeleteAclsFilterResult(
                error_code=0,
                error_message=None,
                matching_acls=[
                    DeleteAclsMatchingAcl(
                        error_code=0,
                        error_message=None,
                        resource_type=2,
                        resource_name="t",
                        pattern_type=3,
                        principal="User:a",
                        host="*",
                        operation=4,
                        permission_type=3,
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00\x00\x01"  # filter_results: array of 1
        b"\x00\x00"  # filter_results[0].error_code = 0
        b"\xff\xff"  # filter_results[0].error_message = null
        b"\x00\x00\x00\x01"  # filter_results[0].matching_acls: array of 1
        b"\x00\x00"  # matching_acls[0].error_code = 0
        b"\xff\xff"  # matching_acls[0].error_message = null
        b"\x02"  # matching_acls[0].resource_type = 2 (TOPIC)
        b"\x00\x01t"  # matching_acls[0].resource_name = "t"
        b"\x03"  # matching_acls[0].pattern_type = 3 (LITERAL, v1+)
        b"\x00\x06User:a"  # matching_acls[0].principal = "User:a"
        b"\x00\x01*"  # matching_acls[0].host = "*"
        b"\x04"  # matching_acls[0].operation = 4 (WRITE)
        b"\x03"  # matching_acls[0].permission_type = 3 (ALLOW)
    )
    check_response(31, 1, body, expected)
