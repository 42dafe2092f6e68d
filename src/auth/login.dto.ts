import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class LoginDto {
  @ApiProperty({ example: 'jane' }) @IsString() @IsNotEmpty() @MaxLength(100) username: string;
  @ApiProperty({ example: 'correct horse battery' }) @IsString() @IsNotEmpty() @MaxLength(200) password: string;
}

export class WalletToken {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' }) access_token: string;
  @ApiProperty({ example: 'Bearer' }) token_type: string;
  @ApiProperty({ example: 3600, description: 'lifetime in seconds' }) expires_in: number;
}
