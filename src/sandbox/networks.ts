import type { Environment } from '../schemas/index.js';

/** A token the sandbox accepts on one network. */
export interface TokenSpec {
  symbol: string;
  contractAddress: string;
  decimals: number;
}

/** A network (chain) enabled for every sandbox merchant of one environment. */
export interface NetworkSpec {
  networkId: number;
  chainName: string;
  family: 'evm' | 'tron';
  /** The chain record's uuid (spec 2.2 `chainId`). */
  chainId: string;
  tokens: TokenSpec[];
}

/**
 * Networks per environment: testnets for `test`, mainnets for `live`. Tron carries USDT only
 * (Circle stopped USDC on Tron in 2024), so `USDC` with a Tron `networkId` is `token_not_available`.
 */
export const DEFAULT_NETWORKS: Record<Environment, NetworkSpec[]> = {
  test: [
    {
      networkId: 11155111,
      chainName: 'Sepolia',
      family: 'evm',
      chainId: '5e1f6c2a-5b0e-4f43-9d51-0c6f0aa11155',
      tokens: [
        { symbol: 'USDT', contractAddress: '0xaa8e23fb1079ea71e0a56f48a2aa51851d8433d0', decimals: 6 },
        { symbol: 'USDC', contractAddress: '0x1c7d4b196cb0c7b01d743fbc6116a902379c7238', decimals: 6 },
      ],
    },
    {
      networkId: 3448148188,
      chainName: 'Tron Nile',
      family: 'tron',
      chainId: '7a3b9e0d-2c41-4f6e-8a5d-3448148188aa',
      tokens: [{ symbol: 'USDT', contractAddress: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', decimals: 6 }],
    },
  ],
  live: [
    {
      networkId: 1,
      chainName: 'Ethereum',
      family: 'evm',
      chainId: '0c8d2f4e-6a1b-4b7c-9e3d-000000000001',
      tokens: [
        { symbol: 'USDT', contractAddress: '0xdac17f958d2ee523a2206206994597c13d831ec7', decimals: 6 },
        { symbol: 'USDC', contractAddress: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: 6 },
      ],
    },
    {
      networkId: 728126428,
      chainName: 'Tron',
      family: 'tron',
      chainId: '3f6e1d9c-8b2a-4c5d-a7e0-000728126428',
      tokens: [{ symbol: 'USDT', contractAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }],
    },
  ],
};

/** One network with the tokens a request allows on it. */
export interface Route {
  network: NetworkSpec;
  tokens: TokenSpec[];
}

export type RouteProblem = { code: 'network_not_available' | 'token_not_available'; message: string };

/**
 * The networks and tokens a resource may be paid with, limited by the request's `networkId` and
 * `token` (spec 1). Returns a problem (a 422) when the limit leaves nothing.
 */
export function selectRoutes(networks: NetworkSpec[], limits: { networkId?: number | undefined; token?: string | undefined }): Route[] | RouteProblem {
  const candidates = limits.networkId === undefined ? networks : networks.filter((network) => network.networkId === limits.networkId);
  if (candidates.length === 0) {
    return {
      code: 'network_not_available',
      message: `networkId ${limits.networkId} is not enabled for this account; enabled: ${networks.map((n) => `${n.networkId} (${n.chainName})`).join(', ')}.`,
    };
  }
  const wanted = limits.token?.toUpperCase();
  const routes = candidates
    .map((network) => ({ network, tokens: wanted === undefined ? network.tokens : network.tokens.filter((token) => token.symbol.toUpperCase() === wanted) }))
    .filter((route) => route.tokens.length > 0);
  if (routes.length === 0) {
    const offered = [...new Set(candidates.flatMap((n) => n.tokens.map((t) => t.symbol)))].join(', ');
    return {
      code: 'token_not_available',
      message: `token ${limits.token} is not available${limits.networkId === undefined ? '' : ` on network ${limits.networkId}`}; available: ${offered}.`,
    };
  }
  return routes;
}
