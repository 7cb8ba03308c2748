# Debian packages (packaging/README.md): `roceconf` for the lab host, `roceconf-agent` for the
# DUT host. The version is project()'s; dependencies come from dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME roceconf)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "roceconf maintainers <roceconf@localhost>")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_STRIP_FILES ON)
if(ROCECONF_AGENT_ONLY)
  set(CPACK_COMPONENTS_ALL agent)
else()
  set(CPACK_COMPONENTS_ALL roceconf agent)
endif()

set(CPACK_DEBIAN_ROCECONF_PACKAGE_NAME roceconf)
set(CPACK_COMPONENT_ROCECONF_DESCRIPTION
    "RoCEv2 conformance suite, packet dissector and reference target\n"
    "The roceconf command line (run, decode, compare, target, soak, fleet), roceconf-gen, the\n"
    "Wireshark plugin for the system's Wireshark and the Python module for /usr/bin/python3.")
# The Python module is loaded by /usr/bin/python3, which shlibdeps cannot see.
set(CPACK_DEBIAN_ROCECONF_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_ROCECONF_PACKAGE_SUGGESTS "tshark, wireshark")

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME roceconf-agent)
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "roceconf's DUT-side responder and control API\n"
    "roceconf-agent runs on the host of the device under test: the responder convention over\n"
    "libibverbs and librdmacm, and a control API protected by /etc/roceconf-agent.secret.")

# The catalogue's sources (the binary carries them compiled in) and the reference pages, for
# reading and for `roceconf run --cases` users copying a case.
if(NOT ROCECONF_AGENT_ONLY)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/cases/ DESTINATION share/roceconf/cases
          COMPONENT roceconf FILES_MATCHING PATTERN "*.rcase" PATTERN "*.md")
  install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/suite/engine/PROFILE.md
                ${PROJECT_SOURCE_DIR}/control/CONTROL_API.md
          DESTINATION share/doc/roceconf COMPONENT roceconf)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/README.md DESTINATION share/doc/roceconf
          RENAME PACKAGING.md COMPONENT roceconf)
endif()

include(CPack)
