# transit platform --platform FILE --hostfile FILE: the platform names the machine, and the hostfile
# has one line per rank, PE p on node p / pes_per_node (torus:3x2:4, 10 ranks: nodes 0,0,0,0,1,...).
set(platform ${DIR}/platform_test.xml)
set(hostfile ${DIR}/platform_test.hosts)
file(REMOVE ${platform} ${hostfile})
execute_process(COMMAND ${CLI} platform --physical torus:3x2:4 --pes 10 --platform ${platform} --hostfile ${hostfile}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "transit platform failed (${status}): ${out}${err}")
endif()
file(READ ${platform} xml)
if(NOT xml MATCHES "topology=\"TORUS\" topo_parameters=\"2,3\"" OR NOT xml MATCHES "core=\"4\"")
  message(FATAL_ERROR "platform file lacks the torus cluster of 2,3 with 4 cores:\n${xml}")
endif()
file(READ ${hostfile} hosts)
set(expected "node-0\nnode-0\nnode-0\nnode-0\nnode-1\nnode-1\nnode-1\nnode-1\nnode-2\nnode-2\n")
if(NOT hosts STREQUAL expected)
  message(FATAL_ERROR "hostfile:\n${hosts}expected:\n${expected}")
endif()
